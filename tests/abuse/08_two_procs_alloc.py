# Two processes each stay under the limit but together exceed it: the limit is per job
# (cgroup), not per process (RLIMIT_AS), so the job is killed and reported memory_limit.
# expect: status=memory_limit
# limits: memory_mb=64 wall_ms=3000
import time
child = os.fork()
buf = b"x" * (44 * 1024 * 1024)  # touched pages, not lazily zeroed
time.sleep(1.0)
if child == 0:
    os._exit(0)
_, st = os.waitpid(child, 0)
if os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0:
    escaped("two-procs-88MB-under-64MB-limit")  # both held 44 MB at once and survived
blocked("two-procs", f"child wait status {st}")
