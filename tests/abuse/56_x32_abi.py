# x32 syscall numbers (bit 30 set) are a second syscall table on x86_64: killed by the
# filter (or ENOSYS where the kernel lacks x32), never executed.
# expect: status in ok,error,seccomp_violation
r, err = sc(0x40000000 | 39)  # x32 getpid
print("x32 getpid:", r, err)
if r == os.getpid():
    escaped("x32-syscall")
else:
    blocked("x32", err)
r, err = sc(0x40000000 | 272, 0x10000000)  # x32 unshare(CLONE_NEWUSER)
if r == 0:
    escaped("x32-unshare")
