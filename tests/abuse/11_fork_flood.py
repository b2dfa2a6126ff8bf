# Forks children that stay alive until fork fails: the pids limit (default 64, maximum 256)
# must stop it with EAGAIN, the job ends when the main process exits, and none is left.
# Bounded at 400 children so a missing limit cannot take the host down.
# solo: uses the whole pids budget
# memory_mb=128 below leaves room for 64 processes, so the pids limit is what stops it in both
# modes (a process forked in zygote mode with numpy preloaded costs ~0.6 MB more, docs/zygote.md).
# expect: status in ok,error
# expect: stdout-contains=BLOCKED:fork
# expect: host-procs<=70
# limits: wall_ms=3000 memory_mb=128
import time
n = 0
try:
    for n in range(400):
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
except OSError as e:
    blocked("fork", f"after {n} children: {ename(e.errno)}")
else:
    escaped("forked-400-children")
