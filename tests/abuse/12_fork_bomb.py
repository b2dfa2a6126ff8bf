# The classic bomb, every process forking in a loop (depth-bounded to 2**9 = 512 processes so a
# missing limit cannot take the host down); the survivors sleep. It must end at the wall limit
# with the pids limit holding and no process left behind.
# solo: uses the whole pids budget
# expect: status=timeout
# expect: host-procs<=70
# expect: wall-ms<=5000
# limits: wall_ms=2000
import time
for _ in range(9):
    try:
        os.fork()
    except OSError:
        pass
time.sleep(60)
