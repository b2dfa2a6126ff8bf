# kill(-1, SIGKILL), kill of the host sentinel and of the runner by pid, kill of pid 1 and of
# the process group: only the job's own processes may die.
# expect: status in ok,error,signal
# host: sentinel
import signal
for pid in (CTX["sentinel_pid"], CTX["runner_pid"]):
    try:
        os.kill(pid, 0)
        escaped(f"can-signal-host-pid-{pid}")
    except OSError as e:
        blocked("signal-host-pid", ename(e.errno))
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
for target in (1,):
    try:
        os.kill(target, signal.SIGKILL)
    except OSError:
        pass
os.kill(-1, signal.SIGKILL)
print("after kill(-1)", flush=True)
