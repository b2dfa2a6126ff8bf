# Threads count against the pids limit: 10,000 requested (bounded at 1,000) must end in a clean
# error well before.
# solo: uses the whole pids budget
# expect: status in ok,error
# expect: stdout-contains=BLOCKED:threads
# limits: wall_ms=3000
import threading, time
threading.stack_size(64 * 1024)
n = 0
try:
    for n in range(1000):
        threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
except (RuntimeError, OSError) as e:
    blocked("threads", f"after {n}: {e}")
else:
    escaped("started-1000-threads")
os._exit(0)
