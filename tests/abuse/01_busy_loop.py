# A CPU-bound infinite loop: the wall or CPU limit ends it, and it is never called memory_limit.
# expect: status=timeout
# expect: wall-ms<=5000
# limits: wall_ms=2000 cpu_ms=1000
while True:
    pass
