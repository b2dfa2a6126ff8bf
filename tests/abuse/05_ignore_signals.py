# Ignores every catchable signal (SIGTERM, SIGXCPU, SIGINT, SIGHUP...) and spins: the limit
# must be enforced with SIGKILL.
# expect: status=timeout
# expect: wall-ms<=5000
# limits: wall_ms=2000 cpu_ms=1000
import signal
for s in range(1, 32):
    try:
        signal.signal(s, signal.SIG_IGN)
    except (OSError, ValueError):
        pass
while True:
    pass
