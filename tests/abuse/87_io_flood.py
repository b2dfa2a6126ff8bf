# The host's disk is shared with the job through its read-only /usr: reading a large host file
# with O_DIRECT (no page cache, every read goes to the disk) must not go faster than the job's
# io_read_bps (issue 11: 1.6 GB in 6 s before there was a limit). The case reads for 3 s and
# prints its rate; it is ESCAPED:io-rate above 1.5x the limit. Where the host's /usr is on no
# block device (the cgroup v2 guest's 9p root: nothing to throttle), only the read is checked.
# expect: status=ok
# expect: stdout-contains=io-read
# host: blockdev
# limits: io_read_bps=5242880
import mmap
import time

LIMIT = 5242880
CHUNK = 1 << 20
SECONDS = 3.0

# The largest file of the interpreter's library directories: what the job can read most of.
best, size = None, 0
for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib", "/usr/bin"):
    try:
        for e in os.scandir(d):
            if e.is_file(follow_symlinks=False) and e.stat().st_size > size:
                best, size = e.path, e.stat().st_size
    except OSError:
        pass
try:
    fd = os.open(best, os.O_RDONLY | os.O_DIRECT)
    direct = True
except OSError as e:  # a file system without direct I/O: read through the page cache instead
    blocked("odirect", ename(e.errno))
    fd, direct = os.open(best, os.O_RDONLY), False
buf = mmap.mmap(-1, CHUNK)  # page-aligned, as O_DIRECT needs
total, off, t0 = 0, 0, time.monotonic()
span = size - size % CHUNK
while time.monotonic() - t0 < SECONDS:
    try:
        n = os.preadv(fd, [buf], off)
    except OSError as e:
        blocked("read", ename(e.errno))
        break
    if n <= 0 or off + CHUNK >= span:
        off = 0
    else:
        off += n
    total += max(n, 0)
elapsed = time.monotonic() - t0
os.close(fd)
rate = total / elapsed
print(f"io-read {total} bytes of {best} in {elapsed:.2f} s: {rate / 1e6:.1f} MB/s "
      f"(limit {LIMIT / 1e6:.1f} MB/s, direct {direct}, block device {CTX.get('blockdev')})",
      flush=True)
if CTX.get("blockdev") and direct and rate > 1.5 * LIMIT:
    escaped(f"io-rate {rate / 1e6:.1f}MB/s")
