# subprocess.Popen in a loop (interpreters that sleep): fails at the pids limit (memory is
# raised so that the pids limit, not the memory limit, is what stops it). Bounded at 120.
# solo: uses the whole pids budget
# expect: status in ok,error,timeout
# expect: host-procs<=70
# limits: wall_ms=5000 memory_mb=512
import time
sp = imp("sub" + "process")
kids = []
try:
    for i in range(120):
        kids.append(sp.Popen([sys.executable, "-c", "import time; time.sleep(60)"]))
except OSError as e:
    blocked("popen", f"after {len(kids)}: {ename(e.errno)}")
else:
    escaped("popen-120-interpreters")
