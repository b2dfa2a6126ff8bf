# Allocates far above the memory limit in one go: reported memory_limit (the cgroup's OOM
# record or the allocation failure), never timeout.
# expect: status=memory_limit
# limits: memory_mb=64 wall_ms=3000
x = " " * (400 * 1024 * 1024)
escaped("allocated-400MB-under-64MB-limit")
