# Fills /dev/shm (RAM-backed on the host): it must be the job's own, capped and charged to the
# job's memory; never the host's. Bounded at 320 MB.
# expect: status in ok,error,memory_limit,signal
# limits: memory_mb=64 wall_ms=3000
total = 0
chunk = b"s" * (8 * 1024 * 1024)
try:
    for i in range(40):
        with open_(f"/dev/shm/{MARK}-{i}", "wb") as f:
            f.write(chunk)
        total += len(chunk)
except OSError as e:
    blocked("shm-fill", f"after {total >> 20} MB: {ename(e.errno)}")
if total >= 320 * 1024 * 1024:
    escaped("shm-320MB-under-64MB-limit")
