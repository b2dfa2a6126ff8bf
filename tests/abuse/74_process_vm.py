# process_vm_readv/writev read and write another process's memory (here its own child's,
# the only one it could reach): denied.
# expect: status in ok,error,seccomp_violation
import time
ct = imp("ctypes")
child = os.fork()
if child == 0:
    time.sleep(5)
    os._exit(0)
buf = ct.create_string_buffer(16)
local = (ct.c_void_p * 2)(ct.cast(buf, ct.c_void_p), 16)
remote = (ct.c_void_p * 2)(ct.cast(buf, ct.c_void_p), 16)
for nr, name in ((310, "process_vm_readv"), (311, "process_vm_writev")):
    r, err = sc(nr, child, ct.byref(local), 1, ct.byref(remote), 1, 0)
    if r >= 0:
        escaped(name)
    else:
        blocked(name, err)
os.kill(child, 9)
