# Regression guard: a job may start a few processes of its own (within the pids limit): the
# interpreter through subprocess, and os.fork/waitpid. Zygote mode denies execve by design
# (docs/zygote.md): there subprocess must fail cleanly with EPERM while fork still works.
# expect: status=ok
# expect: stdout-contains=subprocess-ok
# expect-zygote: status=ok
# expect-zygote: stdout-contains=fork-ok exec-denied
sp = imp("sub" + "process")
try:
    r = sp.run([sys.executable, "-c", "print(6*7)"], capture_output=True, text=True, timeout=5)
    ran = "yes" if r.stdout.strip() == "42" else "bad " + r.stderr[-200:]
except PermissionError as e:
    ran = "denied" if e.errno == 1 else "bad " + repr(e)
pid = os.fork()
if pid == 0:
    os._exit(3)
_, st = os.waitpid(pid, 0)
forked = os.waitstatus_to_exitcode(st) == 3
if forked and ran == "yes":
    print("subprocess-ok")
elif forked and ran == "denied":
    print("fork-ok exec-denied")
else:
    print("subprocess-bad", forked, ran)
