# Sleeping uses no CPU, so only the wall-clock limit can end it.
# expect: status=timeout
# expect: wall-ms<=5000
# limits: wall_ms=2000
import time
time.sleep(10**6)
