# _concurrent.py: the job of tests/integration/abuse_concurrency.py, run 20 times at once.
# Not a numbered case. Each copy hides a secret named after its own token in its working
# directory, /tmp, /dev/shm and /var/tmp, then looks for the others' secrets everywhere it
# can (/, /proc/*/root, /proc/*/cwd, the parent of its working directory), for their processes
# (/proc) and for their sockets: copy 0 listens on 127.0.0.1:PORT and on an abstract unix
# socket, every other copy tries to connect. Copy 0 also holds flocks on files every job has
# (the interpreter, a stdlib module, /dev/null, /dev/urandom, /etc/passwd, the namespace file
# of the user namespace and /proc/self/exe, which all jobs share) for 8 s from its start (the runner starts it
# 1.5 s before the others); the others probe it, which would be a covert
# channel between jobs. Lines: OWN:<n>, UID:<uid>, SAW:<token>, PIDS:<list>, ESCAPED:<what>.
import socket, time, fcntl
t0 = time.monotonic()
idx = CTX["index"]
prefix = "codeq-conc-secret-" + CTX["suite"] + "-"
mine = prefix + TOKEN
for d in (".", "/tmp", "/dev/shm", "/var/tmp"):
    try_create(f"{d}/{mine}")
LOCKED = [sys.executable, "/usr/lib/python3.11/os.py", "/dev/null", "/dev/urandom", "/etc/passwd",
          "/proc/self/ns/user", "/proc/self/exe"]  # inodes jobs share: locks must do nothing
locks = []
for path in LOCKED:
    try:
        locks.append((path, os.open(path, os.O_RDONLY)))
    except OSError as e:
        blocked("lock-open", f"{path} {ename(e.errno)}")
servers = []
if idx == 0:
    for path, fd in locks:
        fcntl.flock(fd, fcntl.LOCK_EX)
    for fam, addr in ((socket.AF_INET, ("127.0.0.1", CTX["port"])),
                      (socket.AF_UNIX, "\0codeq-conc-" + CTX["suite"])):
        try:
            s = socket.socket(fam, socket.SOCK_STREAM)
            s.bind(addr)
            s.listen(32)
            servers.append(s)
            print("LISTENING", addr)
        except OSError as e:
            blocked("listen", f"{addr} {ename(e.errno)}")
time.sleep(1.0)
seen = set()
own = 0
def look(path):
    global own
    try:
        names = os.listdir(path)
    except OSError:
        return []
    for n in names:
        if n.startswith(prefix):
            if n == mine:
                own += 1
            else:
                seen.add(n[len(prefix):])
    return names
count = 0
for dirpath, dirnames, filenames in os.walk("/"):
    if time.monotonic() - t0 > 2.5 or count > 30000:
        break
    dirnames[:] = [d for d in dirnames if dirpath != "/" or d not in ("proc", "sys")]
    count += len(dirnames) + len(filenames)
    for n in filenames + dirnames:
        if n.startswith(prefix) and n != mine:
            seen.add(n[len(prefix):])
own_tmp = own
own = 0
for d in (".", "/tmp", "/dev/shm"):
    look(d)
for pid in [p for p in os.listdir("/proc") if p.isdigit()][:300]:
    for sub in ("root/tmp", "root/dev/shm", "cwd"):
        look(f"/proc/{pid}/{sub}")
for sib in (look("..") or [])[:300]:
    look(f"../{sib}")
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print(f"OWN:{own}")
print(f"UID:{os.getuid()}")
print(f"PIDS:{pids[:50]}")
for t in sorted(seen):
    print(f"SAW:{t}")
if idx != 0:
    for fam, addr in ((socket.AF_INET, ("127.0.0.1", CTX["port"])),
                      (socket.AF_UNIX, "\0codeq-conc-" + CTX["suite"])):
        try:
            c = socket.socket(fam, socket.SOCK_STREAM)
            c.settimeout(0.5)
            c.connect(addr)
            escaped(f"connected-other-job-{addr!r}")
        except OSError as e:
            blocked("connect", f"{addr!r} {ename(e.errno) if e.errno else e}")
    for path, fd in locks:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            print(f"FLOCK:free {path}")
        except OSError as e:
            print(f"FLOCK:held-by-another-job {path} {ename(e.errno)}")
while idx == 0 and time.monotonic() - t0 < 8.0:
    time.sleep(0.1)
