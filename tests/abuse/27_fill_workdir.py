# Fills the working directory: a size-capped tmpfs answers ENOSPC (or the job's memory limit
# ends it); it never reaches the host's disk. Bounded at 320 MB.
# expect: status in ok,error,memory_limit
# limits: memory_mb=64 wall_ms=4000
chunk = b"w" * (8 * 1024 * 1024)
total = 0
try:
    for i in range(40):
        with open_(f"fill-{i}", "wb") as f:
            f.write(chunk)
        total += len(chunk)
except OSError as e:
    blocked("workdir-fill", f"after {total >> 20} MB: {ename(e.errno)}")
if total >= 320 * 1024 * 1024:
    escaped("workdir-320MB-written")
