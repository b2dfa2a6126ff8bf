# mount(2) of a new tmpfs and of proc, and a bind of / : refused (no CAP_SYS_ADMIN, and seccomp
# denies mount). Never remounts an existing superblock.
# expect: status in ok,error,seccomp_violation
os.mkdir("m")
ct = imp("ctypes")
for src, fs, flags in ((b"none", b"tmpfs", 0), (b"proc", b"proc", 0), (b"/", None, 4096 | 16384)):
    r = libc().mount(src, b"m", fs, ct.c_ulong(flags), None)
    if r == 0:
        escaped(f"mount-{src.decode()}")
        libc().umount2(b"m", 2)
    else:
        blocked("mount", f"{src} {ename(ct.get_errno())}")
