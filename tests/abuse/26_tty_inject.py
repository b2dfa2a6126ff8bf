# No controlling terminal: /dev/tty cannot be opened, and TIOCSTI (also with high bits set in
# the request, a known seccomp-filter bypass) injects nothing on fds 0-2.
# expect: status in ok,error,seccomp_violation
import fcntl, termios
try:
    fd = os.open("/dev/tty", os.O_RDWR | os.O_NONBLOCK)
    escaped("opened-/dev/tty")
    os.close(fd)
except OSError as e:
    blocked("dev-tty", ename(e.errno))
ct = imp("ctypes")
c = ct.c_char(b"x")
for fd in (0, 1, 2):
    for req in (termios.TIOCSTI, termios.TIOCSTI | (1 << 32)):
        r = libc().ioctl(fd, ct.c_ulong(req), ct.byref(c))
        if r == 0:
            escaped(f"tiocsti-fd{fd}-{req:#x}")
        else:
            blocked("tiocsti", f"fd {fd} {req:#x} {ename(ct.get_errno())}")
