# Eight busy processes: per-process RLIMIT_CPU multiplies by the process count, so the job's
# total CPU must be bounded by the cgroup (cpu_ms for the whole job), not per process.
# expect: status=timeout
# expect: cpu-ms<=1800
# limits: wall_ms=3000 cpu_ms=1000
for _ in range(7):
    if os.fork() == 0:
        break
while True:
    pass
