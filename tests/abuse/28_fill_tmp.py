# Fills /tmp: the job's own capped tmpfs, never the host's /tmp. Bounded at 320 MB.
# expect: status in ok,error,memory_limit
# limits: memory_mb=64 wall_ms=4000
chunk = b"t" * (8 * 1024 * 1024)
total = 0
try:
    for i in range(40):
        with open_(f"/tmp/{MARK}-{i}", "wb") as f:
            f.write(chunk)
        total += len(chunk)
except OSError as e:
    blocked("tmp-fill", f"after {total >> 20} MB: {ename(e.errno)}")
if total >= 320 * 1024 * 1024:
    escaped("tmp-320MB-written")
