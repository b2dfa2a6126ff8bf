# The interpreter, its standard library and its libraries are the host's, bound read-only:
# opening them for writing (nothing is ever written here) or truncating fails, so one job
# cannot plant code that the next job (or the host) runs.
# expect: status in ok,error,seccomp_violation
targets = ["/usr/bin/python3", "/usr/lib/python3.11/os.py", "/usr/lib/python3.11/site.py",
           "/usr/lib/x86_64-linux-gnu/libc.so.6", "/etc/passwd", "/usr/lib/python3.11"]
for t in targets:
    try:
        fd = os.open(t, os.O_WRONLY | os.O_APPEND)
        os.close(fd)
        escaped(f"writable-{t}")
    except OSError as e:
        blocked("open-write", f"{t} {ename(e.errno)}")
    try:
        os.utime(t)
        escaped(f"utime-{t}")
    except OSError as e:
        blocked("utime", f"{t} {ename(e.errno)}")
try:
    os.rename("/usr/lib/python3.11/os.py", "/usr/lib/python3.11/os.py.bak")
    escaped("renamed-stdlib")
except OSError as e:
    blocked("rename", ename(e.errno))
