# Result tampering: SIGXCPU sent to itself with no CPU used must not be reported as a CPU
# timeout; it is the job's own signal.
# expect: status in signal,error
import signal
print("faking", flush=True)
os.kill(os.getpid(), signal.SIGXCPU)
