# The classic chroot escape (chroot into a subdirectory, chdir .. repeatedly, chroot .) needs
# CAP_SYS_CHROOT, which the job does not have.
# expect: status in ok,error,seccomp_violation
os.mkdir("jail")
try:
    os.chroot("jail")
    escaped("chroot-allowed")
    for _ in range(64):
        os.chdir("..")
    os.chroot(".")
except OSError as e:
    blocked("chroot", ename(e.errno))
