# Empty files cost no bytes but kernel memory (inodes, dentries): 200,000 of them in the job's
# tmpfs must be bounded by its memory limit or an inode cap, not paid for by the host.
# Bounded at 200,000 files and the wall limit.
# expect: status in ok,error,memory_limit,timeout
# limits: memory_mb=64 wall_ms=4000
import time
t0 = time.monotonic()
n = 0
try:
    for n in range(200000):
        fd = os.open(f"/tmp/e{n}", os.O_CREAT | os.O_WRONLY, 0o644)
        os.close(fd)
        if n % 1000 == 0 and time.monotonic() - t0 > 3.5:
            break
except OSError as e:
    blocked("inode-flood", f"after {n}: {ename(e.errno)}")
else:
    if n >= 199999:
        escaped("200000-inodes-under-64MB")
    else:
        blocked("inode-flood", f"slowed to {n} files in 3.5 s")
