# Loading a kernel or a module: refused before the kernel looks at the arguments (the calls
# use invalid arguments, so a permitted call fails with EINVAL/EBADF instead of EPERM).
# expect: status in ok,error,seccomp_violation
for nr, name, args in ((246, "kexec_load", (0, 0, 0, 0xdead0000)),
                       (320, "kexec_file_load", (-1, -1, 0, 0, 0xdead0000)),
                       (313, "finit_module", (-1, 0, 0)),
                       (175, "init_module", (0, 0, 0)),
                       (176, "delete_module", (0, 0)),
                       (169, "reboot", (0, 0, 0, 0)),
                       (167, "swapon", (0, 0)),
                       (163, "acct", (1,))):
    r, err = sc(nr, *args)
    if err not in ("EPERM", "ENOSYS", "EACCES"):
        escaped(f"{name}-not-denied-{err}")
    else:
        blocked(name, err)
