# The cgroup filesystem is not writable from the job: no new cgroup, no moving itself out of
# its limits, no release_agent (never written here: only its writability is probed by open).
# expect: status in ok,error
for d in ("/sys/fs/cgroup/pids", "/sys/fs/cgroup/memory", "/sys/fs/cgroup"):
    try:
        os.mkdir(f"{d}/{MARK}")
        escaped(f"cgroup-mkdir-{d}")
    except OSError as e:
        blocked("cgroup-mkdir", f"{d} {ename(e.errno)}")
for path in ("/sys/fs/cgroup/memory/cgroup.procs", "/sys/fs/cgroup/cgroup.procs",
             "/sys/fs/cgroup/memory/release_agent"):
    try:
        fd = os.open(path, os.O_WRONLY)
        os.close(fd)
        escaped(f"cgroup-writable-{path}")
    except OSError as e:
        blocked("cgroup-open", f"{path} {ename(e.errno)}")
