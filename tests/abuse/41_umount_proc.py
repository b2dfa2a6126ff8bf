# Detaching the job's /proc (or /) to uncover what is mounted beneath it (the host's /proc in a
# namespace that copied the host's mounts): refused.
# expect: status in ok,error,seccomp_violation
ct = imp("ctypes")
for target in (b"/proc", b"/"):
    r = libc().umount2(target, 2)  # MNT_DETACH
    if r == 0:
        escaped(f"umount-{target.decode()}")
    else:
        blocked("umount", f"{target} {ename(ct.get_errno())}")
try:
    n = len([p for p in os.listdir("/proc") if p.isdigit()])
    if n > 10:
        escaped(f"host-proc-uncovered-{n}-pids")
except OSError:
    pass
