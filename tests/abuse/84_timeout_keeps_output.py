# Output written before a timeout is kept in the result (users need to see how far it got),
# and a job that hangs after printing is still a timeout.
# expect: status=timeout
# expect: stdout-contains=progress 3/3
# limits: wall_ms=2000
import time
for i in range(1, 4):
    print(f"progress {i}/3", flush=True)
time.sleep(60)
