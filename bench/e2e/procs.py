"""What a worker costs the machine, read from /proc: CPU time and memory of a process tree, the
machine's busy time, and the facts a result file needs to be compared with another run.

CPU of a tree = the sum over the root and every live descendant of utime + stime + cutime +
cstime (/proc/PID/stat). A job process that exits is reaped by its parent in the tree (codeq's
zygote, the seed worker's subprocess.run), and the kernel adds its time to that parent's cutime
/ cstime, so finished jobs stay counted. One table of /proc is read per sample, so a job reaped
between two reads can be counted twice or not at all: the error is at most the CPU of the jobs
finishing at that instant, and the worker's lifetime total (os.wait4's rusage, exact) is kept
beside it as a check.

The machine's /proc/stat is read too, but only to show how busy the other tenants kept the
CPUs: on a shared machine it cannot say what the worker used."""
import os
import platform
import socket
import subprocess

CLK = os.sysconf("SC_CLK_TCK")


def _stat(pid):
    """(state, ppid, ticks incl. reaped children) of a pid, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
    except OSError:
        return None
    f = s[s.rindex(")") + 2:].split()
    return f[0], int(f[1]), int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])


def _table():
    t = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = _stat(d)
            if st:
                t[int(d)] = st
    return t


def tree(root, table=None):
    """The root and all its descendants alive (or zombie) now."""
    table = table if table is not None else _table()
    kids = {}
    for pid, (_, ppid, _) in table.items():
        kids.setdefault(ppid, []).append(pid)
    out, todo = [], [root] if root in table else []
    while todo and len(out) < 10000:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, ()))
    return out, table


def tree_cpu(root):
    """CPU seconds used so far by the tree under root (see the module comment)."""
    pids, table = tree(root)
    return sum(table[p][2] for p in pids) / CLK


def pid_cpu(pid):
    """CPU seconds of one process (its threads), without its children; None if gone."""
    st = _stat(pid)
    return None if st is None else st[2] / CLK


def alive(pid):
    st = _stat(pid)
    return st is not None and st[0] != "Z"


def _kb(path, key):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_mem(root):
    """{rss_kb, pss_kb, procs}: VmRSS summed over the tree (counts shared pages, such as a
    zygote's preloaded modules in its forks, once per process) and Pss summed (shared pages
    divided among their sharers: what the tree really holds)."""
    pids, _ = tree(root)
    return {"rss_kb": sum(_kb(f"/proc/{p}/status", "VmRSS:") for p in pids),
            "pss_kb": sum(_kb(f"/proc/{p}/smaps_rollup", "Pss:") for p in pids),
            "procs": len(pids)}


def machine_busy():
    """(busy, total) CPU seconds of the whole machine since boot (/proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return (sum(v[:8]) - idle) / CLK, sum(v[:8]) / CLK


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def listener_pid(port):
    """The pid listening on 127.0.0.1:port (the broker's JVM), or None."""
    try:
        out = subprocess.run(["ss", "-ltnpH", f"sport = :{port}"], capture_output=True, text=True,
                             timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    i = out.find("pid=")
    return int(out[i + 4:].split(",")[0]) if i >= 0 else None


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def machine():
    model = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {"host": socket.gethostname(), "cpu_model": model, "cpus_online": os.cpu_count(),
            "mem_total_kb": _kb("/proc/meminfo", "MemTotal:"), "kernel": platform.release(),
            "os": platform.freedesktop_os_release().get("PRETTY_NAME", "")
            if hasattr(platform, "freedesktop_os_release") else ""}
