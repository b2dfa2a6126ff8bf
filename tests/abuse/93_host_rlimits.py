# Limits a permissive host gives the worker (the runner raises its own as far as it may: NICE 40,
# RTPRIO 99, MEMLOCK and MSGQUEUE unlimited, SIGPENDING 2^20) must not reach the job:
# a higher priority than the worker's, pinned pages of the host's page cache (mlock of the
# shared libraries, charged to no cgroup of the job's), more message queues. Each attempt
# fails, and the job's own limits are the sandbox's fixed ones (a negative nice under the
# permissive host: 57_priority_syslog).
# expect: status=ok
# expect: stdout-contains=BLOCKED:mlock-library
# expect: stdout-contains=BLOCKED:mlockall
# expect: stdout-contains=BLOCKED:mq-many EMFILE after 9
# expect: stdout-contains=LIMITS:nice=0 rtprio=0 memlock=65536 msgqueue=819200 sigpending=1024
ct = imp("ctypes")
resource = imp("resource")
# Up to 4 MB of libpython's pages, mapped read-only from /usr: locking them would pin the
# host's page cache.
lib = next(w for w in open_("/proc/self/maps").read().split() if "libpython3" in w or
           w.endswith("/python3.11"))
fd = os.open(lib, os.O_RDONLY)
size = min(os.fstat(fd).st_size, 4 << 20) & ~4095
base, err = sc(9, 0, size, 1, 2, fd, 0)  # mmap(PROT_READ, MAP_PRIVATE)
os.close(fd)
if err is not None:
    print("mmap-failed", err, flush=True)
r, err = sc(149, base, size)  # mlock
if err is None:
    escaped(f"mlock-library {size}")
    sc(150, base, size)
else:
    blocked("mlock-library", err)
r, err = sc(151, 3)  # mlockall(MCL_CURRENT | MCL_FUTURE)
if err is None:
    escaped("mlockall")
    sc(152)
else:
    blocked("mlockall", err)

# POSIX message queues of 80 KB each (the most msg_max and msgsize_max let a job ask for):
# the job's RLIMIT_MSGQUEUE, 800 KiB, lets it have 9; an unlimited host's, 256.
made, err = 0, None
for i in range(40):
    attr = (ct.c_long * 8)(0, 10, 8192, 0)
    r, err = sc(240, ct.c_char_p(b"codeq-abuse-%d" % i), os.O_CREAT | os.O_RDWR, 0o600,
                ct.byref(attr))
    if err is not None:
        break
    made += 1
if made > 10:
    escaped(f"mq-many {made}")
else:
    blocked("mq-many", f"{err} after {made}")

got = {n: resource.getrlimit(getattr(resource, "RLIMIT_" + n.upper()))
       for n in ("nice", "rtprio", "memlock", "msgqueue", "sigpending")}
print("LIMITS:" + " ".join(f"{n}={s}" for n, (s, h) in got.items() if s == h), flush=True)
