# Sleeps past the default 5 s wall-clock limit: status "timeout", the process tree killed.
import time

print("going to sleep", flush=True)
time.sleep(60)
