# SysV shared memory, semaphores and message queues are per IPC namespace: a segment the job
# creates and leaves behind must not exist on the host (the host's /proc/sysvipc is checked
# for its key) and dies with the job's namespace.
# expect: status in ok,error
# expect: stdout-contains=ipc-created
# host: sysvipc
ct = imp("ctypes")
key = int(TOKEN[4:], 16) & 0x7FFFFFFF
IPC_CREAT = 0o1000
shm, e1 = sc(29, key, 4 * 1024 * 1024, IPC_CREAT | 0o666)   # shmget
msg, e2 = sc(68, key, IPC_CREAT | 0o666)                     # msgget
sem, e3 = sc(64, key, 1, IPC_CREAT | 0o666)                  # semget
print("ipc-created", shm, msg, sem, e1, e2, e3)
try:
    with open_("/proc/sysvipc/shm") as f:
        others = [l.split()[0] for l in f.readlines()[1:] if int(l.split()[0]) != key]
    if others:
        escaped(f"foreign-sysv-shm-visible:{','.join(others[:3])}")
except FileNotFoundError:
    blocked("sysvipc-listing", "no /proc/sysvipc in the job's /proc")
