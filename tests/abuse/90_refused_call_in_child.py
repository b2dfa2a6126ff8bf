# Result tampering: a refused system call hidden from the verdict. The kernel's own seccomp kill
# ends only the calling process, so a job that let a child (or a grandchild) make the call and
# reaped it itself used to end `ok`. Every process of the job is under the same filter, whose
# listener is the job's pid 1's: the first refused call anywhere ends the whole job, named.
# Here a grandchild makes it, from a thread, while the parent waits and would carry on.
# expect: status=seccomp_violation
# expect: message-contains=forbidden system call: setxattr (188)
# expect: stdout-not-contains=parent-carried-on
import threading
ct = imp("ctypes")


def refused():
    ct.CDLL(None).syscall(188, b"/work/main.py", b"user.x", b"v", 1, 0)  # setxattr


pid = os.fork()
if pid == 0:
    if os.fork() == 0:
        t = threading.Thread(target=refused)
        t.start()
        t.join()
        os._exit(0)
    os.wait()
    os._exit(0)
print("reaped", os.waitpid(pid, 0)[1], flush=True)
print("parent-carried-on", flush=True)
