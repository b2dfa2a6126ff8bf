"""Host-side probes for the abuse suite: what a job must not have touched outside its sandbox.

Everything here runs in the test process on the host and only observes or cleans up what a
case with a unique token could have created: marker files named after the token, a loopback
listener and a sentinel process the test itself owns, the job's processes (found as
descendants of the `codeq run` process while it runs, and by the token the job writes into
its comm), and codeq cgroups. Nothing here ever runs job code."""
import os
import pathlib
import select
import signal
import socket
import subprocess
import threading
import time

# Where a case may try to leave a marker; each is checked (and cleaned) after every case.
MARKER_DIRS = ["/", "/tmp", "/var/tmp", "/dev", "/dev/shm", "/root", "/etc", "/usr", "/usr/local",
               "/usr/bin", "/var/lib", "/mnt",
               "/usr/lib", "/lib", "/bin", "/var", "/home", "/opt", "/srv", "/run",
               "/sys/fs/cgroup", "/sys/fs/cgroup/pids", "/sys/fs/cgroup/memory",
               "/sys/fs/cgroup/unified", "/tmp/codeq"]
CGROUP_ROOT = pathlib.Path("/sys/fs/cgroup")


def markers(token):
    """Host paths whose name carries the token (marker files, fill files, cgroup dirs)."""
    found = []
    for d in MARKER_DIRS:
        try:
            names = os.listdir(d)
        except OSError:
            continue
        found += [os.path.join(d, n) for n in names[:100000] if token in n]
    return found


def remove(path):
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            if path.startswith("/sys/fs/cgroup/"):
                os.rmdir(path)
            else:
                subprocess.run(["rm", "-rf", "--one-file-system", path], timeout=60, check=False)
        else:
            os.unlink(path)
    except OSError:
        pass


class Listener:
    """TCP and UDP sockets on 127.0.0.1, a filesystem unix socket in the host's /tmp and an
    abstract unix socket, all on the host; none may receive anything from a job."""

    def __init__(self):
        tag = os.urandom(4).hex()
        self.unix_path = f"/tmp/codeq-abuse-host-{tag}.sock"
        self.abstract = f"codeq-abuse-host-{tag}"
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind(self.unix_path)
        os.chmod(self.unix_path, 0o777)
        self.unix.listen(16)
        self.unix.setblocking(False)
        self.abs = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.abs.bind("\0" + self.abstract)
        self.abs.listen(16)
        self.abs.setblocking(False)
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(16)
        self.tcp.setblocking(False)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.udp.setblocking(False)
        self.tcp_port = self.tcp.getsockname()[1]
        self.udp_port = self.udp.getsockname()[1]

    def received(self):
        """What arrived: a list of descriptions, empty when nothing did."""
        got = []
        r, _, _ = select.select([self.tcp, self.udp, self.unix, self.abs], [], [], 0.2)
        for s, what in ((self.tcp, "tcp"), (self.unix, "unix socket"), (self.abs, "abstract socket")):
            if s in r:
                try:
                    conn, peer = s.accept()
                    got.append(f"{what} connection from {peer!r}")
                    conn.close()
                except BlockingIOError:
                    pass
        if self.udp in r:
            try:
                data, peer = self.udp.recvfrom(4096)
                got.append(f"udp datagram {data[:40]!r} from {peer}")
            except BlockingIOError:
                pass
        return got

    def close(self):
        for s in (self.tcp, self.udp, self.unix, self.abs):
            s.close()
        os.unlink(self.unix_path)


class Sentinel:
    """A process the test starts on the host (never inside a job) that a job must not kill."""

    def __init__(self):
        self.proc = subprocess.Popen(["sleep", "300"], start_new_session=True)
        self.pid = self.proc.pid

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)


def _stat(pid):
    """(ppid, starttime) of pid, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
    except OSError:
        return None
    rest = s[s.rfind(")") + 2:].split()
    return int(rest[1]), int(rest[19])


# One pass over /proc serves every run watching at about the same moment: 20 concurrent runs
# each scanning on their own every 50 ms cost the emulated cgroup v2 guest more CPU than their
# jobs, and pushed runs past the runner's bound (tests/integration/abuse_concurrency.py).
_tree_lock = threading.Lock()
_tree = (float("-inf"), {}, {})


def _process_tree(max_age_s):
    """(children by ppid, starttime by pid) of every process, at most max_age_s old."""
    global _tree
    with _tree_lock:
        if time.monotonic() - _tree[0] < max_age_s:
            return _tree[1], _tree[2]
        children, start = {}, {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            st = _stat(int(name))
            if st:
                children.setdefault(st[0], []).append(int(name))
                start[int(name)] = st[1]
        _tree = (time.monotonic(), children, start)
        return children, start


def descendants(root, max_age_s=0.0):
    """{pid: starttime} of every process below root, from a pass over /proc at most max_age_s
    old (0: a fresh one)."""
    children, start = _process_tree(max_age_s)
    out, todo = {}, list(children.get(root, []))
    while todo and len(out) < 100000:
        pid = todo.pop()
        if pid in start and pid not in out:
            out[pid] = start[pid]
            todo += children.get(pid, [])
    return out


def job_cgroups(pid):
    """The codeq cgroup directories a job process is in (empty when codeq made none)."""
    dirs = []
    try:
        with open(f"/proc/{pid}/cgroup") as f:
            lines = f.read().splitlines()
    except OSError:
        return dirs
    for line in lines:
        _, ctrl, path = line.split(":", 2)
        if "codeq" not in path:
            continue
        bases = [CGROUP_ROOT / "unified", CGROUP_ROOT] if ctrl == "" else \
            [CGROUP_ROOT / c for c in (ctrl.replace("name=", ""), ctrl.split(",")[0])]
        dirs += [str(b) + path for b in bases if (b / path.lstrip("/")).exists()]
    return dirs


def alive_of(procs):
    """The recorded (pid, starttime) pairs that still exist: leftover job processes."""
    left = []
    for pid, st in procs.items():
        now = _stat(pid)
        if now and now[1] == st:
            left.append(pid)
    return left


def with_comm(token, also=()):
    """Processes whose comm is the case's token (set by the prologue, inherited on fork) or
    one of the tokens in `also`."""
    names = {token, *also}
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/comm") as f:
                    comm = f.read().strip()
            except OSError:
                continue
            if comm in names:
                pids.append(int(name))
    return pids


def codeq_cgroups():
    """Every codeq cgroup directory (any hierarchy, depth <= 6) as (path, has processes)."""
    out = []
    for top in CGROUP_ROOT.iterdir() if CGROUP_ROOT.is_dir() else []:
        for dirpath, dirnames, filenames in os.walk(top):
            if dirpath.count("/") - str(top).count("/") >= 6:
                dirnames[:] = []
            rel = os.path.relpath(dirpath, top)
            if "codeq" not in rel or "cgroup.procs" not in filenames:
                continue
            try:
                with open(os.path.join(dirpath, "cgroup.procs")) as f:
                    out.append((dirpath, bool(f.read().strip())))
            except OSError:
                pass
    return out


def sysvipc_with_key(key):
    """Host SysV IPC objects (shm, msg, sem) with this key, as "kind:id"."""
    found = []
    for kind in ("shm", "msg", "sem"):
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                rows = f.readlines()[1:]
        except OSError:
            continue
        found += [f"{kind}:{r.split()[1]}" for r in rows if int(r.split()[0]) == key]
    return found


def hwm_mb(pid):
    """Peak resident memory of one process (VmHWM), 0 when it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 0


def mem_available_mb():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    return 0


def usr_blockdev():
    """Whether the host's /usr is on a block device (sandbox/sbx_iodev.c throttles those; an
    overlay, tmpfs or 9p file system has an anonymous device, major 0, and nothing to throttle)."""
    dev = os.stat("/usr").st_dev
    return os.major(dev) != 0 and os.path.exists(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}")


def kill_tree(procs):
    """Last-resort cleanup of leftovers the suite found (they are reported as failures)."""
    for pid in procs:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    time.sleep(0.1)


class ColdCache:
    """Host files a job can read through its /usr, dropped from the host's page cache before
    the job (posix_fadvise DONTNEED, as root, on pages nobody maps); the job only advises the
    kernel to read them ahead, and afterwards they must still be out of the cache: advice that
    queues reads does nothing (a page being read is locked for every reader while the job's
    throttle holds its read). Files of the jobs' interpreter that nothing here imports."""

    NAMES = ["turtle.py", "pydoc.py"]

    def __init__(self):
        lib = pathlib.Path(subprocess.run(
            ["/usr/bin/python3", "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"],
            capture_output=True, text=True, timeout=60, check=True).stdout.strip())
        self.paths = [str(lib / n) for n in self.NAMES]
        for p in self.paths:
            fd = os.open(p, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)
        self.before = {p: PageCache.cached(p) for p in self.paths}

    def filled(self):
        """[(path, bytes before, bytes after, size)] for each file that the job's advice read
        (more than a tenth of it cached after the job than before)."""
        out = []
        for p in self.paths:
            after, size = PageCache.cached(p), os.stat(p).st_size
            if self.before[p] < 0 or after - self.before[p] > size // 10:
                out.append((p, self.before[p], after, size))
        return out


class PageCache:
    """Host files a job can read through its /usr (the host's, under a read-only overlay),
    fully in the host's page cache before the job; afterwards they must still be (a job
    advising the kernel to drop them must not evict the host's cache). Measured with fincore
    (util-linux). Two files of the interpreter's own standard library that the suite itself
    does not import, so nothing but the job touches their cache while it runs."""

    NAMES = ["pydoc_data/topics.py", "_pydecimal.py"]

    def __init__(self):
        lib = pathlib.Path(subprocess.run(  # the jobs' interpreter, not the one running this
            ["/usr/bin/python3", "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"],
            capture_output=True, text=True, timeout=60, check=True).stdout.strip())
        self.paths = [str(lib / n) for n in self.NAMES]
        self.before = {}
        for p in self.paths:
            with open(p, "rb") as f:
                while f.read(1 << 20):
                    pass
            self.before[p] = self.cached(p)

    @staticmethod
    def cached(path):
        out = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES", path],
                             capture_output=True, text=True, timeout=30)
        return int(out.stdout.split()[0]) if out.returncode == 0 and out.stdout.split() else -1

    def dropped(self):
        """[(path, bytes before, bytes after)] for each file that lost more than a tenth."""
        after = {p: self.cached(p) for p in self.paths}
        return [(p, self.before[p], after[p]) for p in self.paths
                if self.before[p] <= 0 or after[p] * 10 < self.before[p] * 9]
