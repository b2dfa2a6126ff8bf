# Opened through /proc/self/exe, the job's interpreter (the zygote's binary, or python in exec
# mode) is a file of the host's disk, and the file-system ioctls on it read the host:
# FS_IOC_GETFSMAP the disk's whole map of used and free extents, live (what other jobs and
# services write), FS_IOC_GETFLAGS and FS_IOC_FSGETXATTR the host file's attributes (a
# red-team review of 2026-12-06). Only the terminal and descriptor requests are a job's: the
# others must fail; FIONBIO, FIOCLEX and isatty (CPython's own) must still work.
# expect: status=ok
# expect: stdout-contains=ioctls done
import fcntl

fd = os.open("/proc/self/exe", os.O_RDONLY)
for name, req, buf in (("FS_IOC_GETFLAGS", 0x80086601, bytearray(8)),
                       ("FS_IOC_FSGETXATTR", 0x801C581F, bytearray(28)),
                       ("FS_IOC_GETFSMAP", 0xC0C0583B, bytearray(192 + 56 * 4)),
                       ("FS_IOC_GETVERSION", 0x80087601, bytearray(8))):
    for signed in (False, True):  # as the kernel reads it, and sign-extended from an int
        r = req - (1 << 32) if signed and req >= 1 << 31 else req
        try:
            fcntl.ioctl(fd, r, buf)
            escaped(f"ioctl-{name}: answered")
        except (OSError, OverflowError) as e:
            blocked("ioctl-" + name, ename(getattr(e, "errno", 0) or 0))
os.set_blocking(fd, False)
os.set_inheritable(fd, True)
print("isatty", os.isatty(fd), "blocking", os.get_blocking(fd), "inheritable",
      os.get_inheritable(fd), flush=True)
os.close(fd)
print("ioctls done")
