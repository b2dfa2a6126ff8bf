# stdin is a sealed memfd: the job cannot write, grow or shrink it (not through fd 0, not by
# reopening it through /proc/self/fd/0), so what the worker handed in stays what it was.
# expect: status in ok,error
# expect: stdout-contains=BLOCKED:stdin-write
for how in ("fd0", "reopen"):
    try:
        fd = 0 if how == "fd0" else os.open("/proc/self/fd/0", os.O_RDWR)
        os.lseek(fd, 0, os.SEEK_SET)
        n = os.write(fd, b"X")
        escaped(f"stdin-written-{how}-{n}")
    except OSError as e:
        blocked("stdin-write", f"{how} {ename(e.errno)}")
try:
    os.ftruncate(0, 0)
    escaped("stdin-truncated")
except OSError as e:
    blocked("stdin-truncate", ename(e.errno))
