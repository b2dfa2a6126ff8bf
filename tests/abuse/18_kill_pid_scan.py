# Signal 0 and then SIGKILL to every pid up to 4 million but our own: only the job's own
# processes are visible or killable.
# expect: status in ok,error
# expect: stdout-contains=visible pids
# host: sentinel
import signal
me = os.getpid()
seen = []
for pid in list(range(2, 70000)) + [CTX["sentinel_pid"], CTX["runner_pid"]]:
    if pid == me:
        continue
    try:
        os.kill(pid, 0)
        seen.append(pid)
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
print("visible pids:", seen[:20])
if CTX["sentinel_pid"] in seen or CTX["runner_pid"] in seen:
    escaped("host-pid-visible")
if len(seen) > 3:
    escaped(f"{len(seen)}-foreign-pids-visible")
