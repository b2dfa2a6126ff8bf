# A double-forked daemon that ignores SIGTERM/SIGHUP/SIGINT and closes its output: still killed
# when the job ends; it would leave a marker after 1.5 s.
# expect: status=ok
# expect: stdout-contains=parent exits
# host: linger_ms=2500
import signal, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(s, signal.SIG_IGN)
        os.close(1)
        os.close(2)
        time.sleep(1.5)
        try_create(f"/tmp/{MARK}-daemon")
        try_create(f"/dev/shm/{MARK}-daemon")
        os._exit(0)
    os._exit(0)
os.wait()
print("parent exits")
