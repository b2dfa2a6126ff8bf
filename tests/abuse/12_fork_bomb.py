# The classic bomb, every process forking in a loop (depth-bounded to 2**9 = 512 processes so a
# missing limit cannot take the host down); the survivors sleep. It must end at the wall limit
# with the pids limit holding and no process left behind.
# solo: uses the whole pids budget
# memory_mb=128 below leaves room for 64 processes, so the pids limit is what stops it in both
# modes (a process forked in zygote mode with numpy preloaded costs ~0.6 MB more, docs/zygote.md).
# expect: status=timeout
# expect: host-procs<=70
# expect: wall-ms<=5000
# limits: wall_ms=2000 memory_mb=128
import time
for _ in range(9):
    try:
        os.fork()
    except OSError:
        pass
time.sleep(60)
