# Raising a hard rlimit is refused, and opening descriptors stops at the open-files limit.
# Bounded at 5,000 descriptors.
# expect: status in ok,error
# expect: stdout-contains=BLOCKED:fds
import resource
for res, name in ((resource.RLIMIT_NOFILE, "NOFILE"), (resource.RLIMIT_NPROC, "NPROC"),
                  (resource.RLIMIT_FSIZE, "FSIZE"), (resource.RLIMIT_CPU, "CPU")):
    soft, hard = resource.getrlimit(res)
    if hard == resource.RLIM_INFINITY:
        print("unlimited", name)
        continue
    try:
        resource.setrlimit(res, (soft, hard + 1000))
        escaped(f"raised-hard-RLIMIT_{name}")
    except (OSError, ValueError) as e:
        blocked("rlimit", f"{name} {e}")
fds = []
try:
    for _ in range(5000):
        fds.append(os.open("/dev/null", os.O_RDONLY))
except OSError as e:
    blocked("fds", f"after {len(fds)} {ename(e.errno)}")
if len(fds) > 1024:
    escaped(f"opened-{len(fds)}-fds")
