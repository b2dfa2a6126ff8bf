# A job that stops itself must still be killed at the wall limit (a stopped process ignores
# everything but SIGKILL/SIGCONT).
# expect: status=timeout
# expect: wall-ms<=5000
# limits: wall_ms=2000
import signal
os.kill(os.getpid(), signal.SIGSTOP)
escaped("resumed-after-sigstop")
