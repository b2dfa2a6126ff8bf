# Regression guard: a job may start a few processes of its own (within the pids limit): the
# interpreter through subprocess, and os.fork/waitpid.
# expect: status=ok
# expect: stdout-contains=subprocess-ok
sp = imp("sub" + "process")
r = sp.run([sys.executable, "-c", "print(6*7)"], capture_output=True, text=True, timeout=5)
pid = os.fork()
if pid == 0:
    os._exit(3)
_, st = os.waitpid(pid, 0)
if r.stdout.strip() == "42" and os.waitstatus_to_exitcode(st) == 3:
    print("subprocess-ok")
else:
    print("subprocess-bad", r.returncode, r.stderr[-200:])
