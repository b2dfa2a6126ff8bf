# _budget.py: the job pair of abuse_concurrency.py's process-budget check. Not a numbered case.
# role "hog" holds as many processes as it may (up to 70) for 4 s; role "victim" waits 1.5 s,
# then needs 8 processes of its own. Jobs are separate: the victim's forks must succeed.
import time
t0 = time.monotonic()
if CTX["role"] == "hog":
    n = 0
    try:
        for n in range(70):
            if os.fork() == 0:
                time.sleep(4)
                os._exit(0)
    except OSError as e:
        blocked("hog-fork", f"after {n}: {ename(e.errno)}")
    time.sleep(max(0.0, 4 - (time.monotonic() - t0)))
    print("HOG-DONE")
else:
    time.sleep(1.5)
    kids = []
    try:
        for _ in range(8):
            pid = os.fork()
            if pid == 0:
                time.sleep(0.2)
                os._exit(0)
            kids.append(pid)
    except OSError as e:
        print(f"VICTIM-STARVED after {len(kids)}: {ename(e.errno)}")
    for k in kids:
        os.waitpid(k, 0)
    print(f"FORKED:{len(kids)}")
