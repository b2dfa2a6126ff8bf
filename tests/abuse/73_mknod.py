# Device nodes: creating one needs CAP_MKNOD (and the job's tmpfs is nodev); a usable
# /dev/null clone, or worse a block device of the host's disk, must be impossible.
# expect: status in ok,error,seccomp_violation
for name, mode, dev in (("dev-null", 0o020000, (1, 3)), ("dev-vda", 0o060000, (253, 0)),
                        ("dev-mem", 0o020000, (1, 1))):
    try:
        os.mknod(name, 0o666 | mode, os.makedev(*dev))
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK)
        escaped(f"mknod-usable-{name}")
        os.close(fd)
    except OSError as e:
        blocked("mknod", f"{name} {ename(e.errno)}")
