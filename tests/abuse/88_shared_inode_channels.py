# Inodes every job shares carry a lock or a watch from one job to another: the one anonymous
# inode behind every eventfd/timerfd/epoll descriptor, namespace files (/proc/self/ns/user),
# in zygote mode the host's zygote binary (/proc/self/exe). Taking a lock must have no effect
# (so no job ever holds one another could find), and inotify and dnotify are refused. Proved
# within the job: a lock taken by this process must not be seen by a forked child through its
# own open of the same inode — which is what another job would do.
# Also the related own-code and host-log cases: no memfd in exec mode (execve of one would run
# a binary the job wrote), and PR_SET_NAME does nothing (the name goes raw into the host's
# kernel log when a process crashes).
# expect-exec: status in ok,error
# expect-exec: stdout-contains=BLOCKED:lock-effect
# expect-exec: stdout-contains=BLOCKED:inotify
# expect-exec: stdout-contains=BLOCKED:dnotify
# expect-exec: stdout-contains=BLOCKED:comm
# expect-exec: stdout-contains=BLOCKED:memfd EPERM
# expect-zygote: status in ok,error
# expect-zygote: stdout-contains=BLOCKED:lock-effect
# expect-zygote: stdout-contains=BLOCKED:inotify
# expect-zygote: stdout-contains=BLOCKED:dnotify
# expect-zygote: stdout-contains=BLOCKED:comm
# expect-zygote: stdout-contains=BLOCKED:memfd-exec
import fcntl, struct
ct = imp("ctypes")
F_OFD_GETLK, F_OFD_SETLK = 36, 37
FLOCK = "hhqqi4x"
# A read lock, which a descriptor opened read-only may take; a write probe conflicts with it.
# OFD locks belong to the open file, POSIX ones to the process: the child sees both.
SET = {"ofd": F_OFD_SETLK, "posix": fcntl.F_SETLK}
GET = {"ofd": F_OFD_GETLK, "posix": fcntl.F_GETLK}


def lk(fd, cmd, kind, start, length):
    return struct.unpack(FLOCK, fcntl.fcntl(fd, cmd, struct.pack(FLOCK, kind, 0, start, length, 0)))


def lock_seen_by_child(opener, how):
    """Lock through this process's descriptor; a child opens the inode anew and probes."""
    fd = opener()
    try:
        if how in SET:
            lk(fd, SET[how], fcntl.F_RDLCK, 0x5EC2E7, 1)  # the range can carry a number
        else:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        return f"refused {ename(e.errno)}"
    pid = os.fork()
    if pid == 0:
        seen = 0
        try:
            fd2 = opener()
            if how in GET:
                seen = lk(fd2, GET[how], fcntl.F_WRLCK, 0, 0)[0] != fcntl.F_UNLCK  # whole file
            else:
                try:
                    fcntl.flock(fd2, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    seen = 1
        except OSError:
            os._exit(2)
        os._exit(1 if seen else 0)
    _, st = os.waitpid(pid, 0)
    return {0: "no effect", 1: "SEEN"}.get(os.waitstatus_to_exitcode(st), "probe failed")


def by_path(path):
    return lambda: os.open(path, os.O_RDONLY)


objects = {"eventfd": lambda: os.eventfd(0), "ns-user": by_path("/proc/self/ns/user"),
           "exe": by_path("/proc/self/exe"), "devnull": by_path("/dev/null")}
for name, opener in objects.items():
    for how in ("ofd", "posix", "flock"):
        try:
            what = lock_seen_by_child(opener, how)
        except OSError as e:
            what = f"open {ename(e.errno)}"
        if what == "SEEN":
            escaped(f"lock-carried-{name}-{how}")
        else:
            blocked("lock-effect", f"{name} {how}: {what}")

libc = ct.CDLL(None, use_errno=True)
ifd = libc.inotify_init1(0)
if ifd >= 0:
    wd = libc.inotify_add_watch(ifd, b"/proc/self/exe", 0xfff)
    if wd >= 0:
        escaped("inotify-watch-on-exe")
    else:
        blocked("inotify", f"add_watch {ename(ct.get_errno())}")
else:
    blocked("inotify", ename(ct.get_errno()))
try:
    d = os.open(".", os.O_RDONLY)
    fcntl.fcntl(d, fcntl.F_NOTIFY, fcntl.DN_CREATE)
    escaped("dnotify")
except OSError as e:
    blocked("dnotify", ename(e.errno))

before = open_("/proc/self/comm").read()
libc.prctl(15, b"x\n<0>FAKE", 0, 0, 0)  # PR_SET_NAME
after = open_("/proc/self/comm").read()
if after != before:
    escaped(f"comm-set-{after!r}")
else:
    blocked("comm", "unchanged")

try:
    m = os.memfd_create("own", 0)
    os.write(m, b"#!/bin/sh\necho ESCAPED:memfd-exec\n")
    try:
        os.execve(f"/proc/self/fd/{m}", ["own"], {})
    except OSError as e:
        blocked("memfd-exec", ename(e.errno))
except OSError as e:
    blocked("memfd", ename(e.errno))
