# unshare (user, mount, net, pid namespaces), setns into pid 1's namespaces and pivot_root:
# all refused with EPERM (or the job is killed by seccomp), never reaching the kernel's checks.
# expect: status in ok,error,seccomp_violation
CLONE = {"user": 0x10000000, "mnt": 0x00020000, "net": 0x40000000, "pid": 0x20000000,
         "cgroup": 0x02000000, "time": 0x00000080}
for name, flag in CLONE.items():
    r, err = sc(272, flag)  # unshare
    if r == 0:
        escaped(f"unshare-{name}")
    else:
        blocked("unshare", f"{name} {err}")
for ns in [f"1/ns/{n}" for n in ("mnt", "net", "pid", "user")] + \
          [f"self/ns/{n}" for n in ("mnt", "net", "pid", "user", "uts", "ipc", "cgroup")]:
    try:
        fd = os.open(f"/proc/{ns}", os.O_RDONLY)
    except OSError as e:
        blocked("ns-open", f"{ns} {ename(e.errno)}")
        continue
    r, err = sc(308, fd, 0)  # setns
    os.close(fd)
    if r == 0:
        escaped(f"setns-{ns}")
    else:
        blocked("setns", f"{ns} {err}")
r, err = sc(155, imp("ctypes").c_char_p(b"."), imp("ctypes").c_char_p(b"."))  # pivot_root
if r == 0 or err not in ("EPERM", "EACCES"):
    escaped(f"pivot_root-not-denied-{err}")
