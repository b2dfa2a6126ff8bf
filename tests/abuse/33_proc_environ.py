# The worker's environment through /proc: the job's pid 1 (codeq's init, a clone of the worker)
# and every visible process's environ, cmdline and memory are searched for the worker's
# variables. None may be readable.
# expect: status in ok,error
needle = b"CODEQ_ABUSE_CANARY"
visible = [p for p in os.listdir("/proc") if p.isdigit()]
blocked("proc-search", f"visible pids {visible[:10]}")
for path in ("/proc/1/environ", "/proc/1/cmdline", "/proc/1/mem", "/proc/1/maps"):
    try:
        with open_(path, "rb") as f:
            data = f.read(1 << 16)
        if needle in data:
            escaped(f"init-{path}")
        print("readable:", path, len(data))
    except OSError as e:
        blocked("init-proc", f"{path} {ename(e.errno)}")
for pid in visible[:200]:
    if int(pid) == os.getpid():
        continue
    for what in ("environ", "cmdline"):
        try:
            with open_(f"/proc/{pid}/{what}", "rb") as f:
                if needle in f.read(1 << 20):
                    escaped(f"proc-{pid}-{what}")
        except OSError as e:
            blocked("proc-read", f"{pid}/{what} {ename(e.errno)}")
    try:
        with open_(f"/proc/{pid}/maps") as f:
            stack = [l for l in f if "[stack]" in l]
        lo, hi = (int(x, 16) for x in stack[0].split()[0].split("-"))
        with open_(f"/proc/{pid}/mem", "rb") as f:
            f.seek(max(lo, hi - (1 << 20)))
            if needle in f.read(hi - max(lo, hi - (1 << 20))):
                escaped(f"proc-{pid}-mem-stack")
    except (OSError, IndexError, ValueError) as e:
        blocked("proc-mem", f"{pid} {e.__class__.__name__}")
