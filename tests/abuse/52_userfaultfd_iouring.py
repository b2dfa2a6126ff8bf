# userfaultfd (race-widening for kernel exploits) and io_uring (a second syscall interface
# seccomp cannot see): denied.
# expect: status in ok,error,seccomp_violation
ct = imp("ctypes")
r, err = sc(323, 0)  # userfaultfd
if r >= 0:
    escaped("userfaultfd")
else:
    blocked("userfaultfd", err)
params = (ct.c_uint8 * 120)()
r, err = sc(425, 4, ct.byref(params))  # io_uring_setup
if r >= 0:
    escaped("io_uring_setup")
else:
    blocked("io_uring_setup", err)
for nr, name in ((426, "io_uring_enter"), (427, "io_uring_register")):
    r, err = sc(nr, 999, 0, 0, 0, 0, 0)
    if err not in ("EPERM", "ENOSYS"):
        escaped(f"{name}-reached-kernel-{err}")
