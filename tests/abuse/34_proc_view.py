# /proc shows only the job's own processes (small pids of its own namespace), and is read-only.
# expect: status in ok,error
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print("pids:", pids[:20])
if len(pids) > 4 or max(pids) > 100:
    escaped(f"proc-shows-{len(pids)}-pids")
for path in ("/proc/sys/kernel/hostname", "/proc/sys/kernel/domainname"):
    try:
        with open_(path, "w") as f:
            f.write("codeq-abuse")
        escaped(f"proc-sys-writable-{path}")
    except OSError as e:
        blocked("proc-sys-write", f"{path} {ename(e.errno)}")
try:
    with open_("/proc/self/oom_score_adj", "w") as f:
        f.write("-1000")
    escaped("oom-score-adj-lowered")
except OSError as e:
    blocked("oom-adj", ename(e.errno))
