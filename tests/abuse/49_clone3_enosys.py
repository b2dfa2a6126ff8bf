# clone3 answers ENOSYS (not EPERM, which glibc would not fall back from), and threads and
# fork, which then go through clone, still work.
# expect: status=ok
# expect: stdout-contains=clone3:ENOSYS
# expect: stdout-contains=threads-ok
import threading
ct = imp("ctypes")
args = (ct.c_uint64 * 11)()
r, err = sc(435, ct.byref(args), 0)  # size 0: EINVAL from the kernel, never a real clone
print(f"clone3:{err}")
res = []
ts = [threading.Thread(target=res.append, args=(i,)) for i in range(4)]
for t in ts:
    t.start()
for t in ts:
    t.join()
pid = os.fork()
if pid == 0:
    os._exit(7)
_, st = os.waitpid(pid, 0)
if sorted(res) == [0, 1, 2, 3] and os.waitstatus_to_exitcode(st) == 7:
    print("threads-ok")
