# ptrace: attach to the job's init (pid 1), to the host sentinel, and PTRACE_TRACEME; all must
# be refused (seccomp denies ptrace; no CAP_SYS_PTRACE).
# expect: status in ok,error,seccomp_violation
# host: sentinel
PTRACE_TRACEME, PTRACE_ATTACH, PTRACE_DETACH = 0, 16, 17
for pid in (1, CTX["sentinel_pid"]):
    r, err = sc(101, PTRACE_ATTACH, pid, 0, 0)
    if r == 0:
        escaped(f"ptrace-attach-{pid}")
        sc(101, PTRACE_DETACH, pid, 0, 0)
    else:
        blocked("ptrace-attach", f"{pid} {err}")
if os.fork() == 0:
    r, err = sc(101, PTRACE_TRACEME, 0, 0, 0)
    if r == 0:
        escaped("ptrace-traceme")
    os._exit(0)
os.wait()
