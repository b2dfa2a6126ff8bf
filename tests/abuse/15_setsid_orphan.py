# Fork; the child makes itself a session leader and outlives the main process, which exits 0.
# It must die with the job: 2.5 s later it would leave a marker in /tmp.
# expect: status=ok
# expect: stdout-contains=main exits
# host: linger_ms=2500
import time
if os.fork() == 0:
    os.setsid()
    time.sleep(1.5)
    for d in ("/tmp", "/dev/shm", "."):
        try_create(f"{d}/{MARK}-orphan")
    escaped("orphan-survived-main-exit")
    os._exit(0)
print("main exits")
