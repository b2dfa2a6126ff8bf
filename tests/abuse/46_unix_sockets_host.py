# Filesystem unix sockets are not confined by the network namespace: the host's control
# sockets (systemd, docker, containerd, dbus, ...) must not exist in the job's view. Abstract
# sockets of the host must not be listed or reachable. The runner listens on a unix socket in
# the host's /tmp and on an abstract socket; both must receive nothing. Only connects, never sends.
# expect: status in ok,error,seccomp_violation
# host: listener
import socket, glob
paths = [CTX["unix_path"], "/run/systemd/private", "/run/systemd/notify", "/var/run/docker.sock",
         "/run/docker.sock", "/run/containerd/containerd.sock", "/run/dbus/system_bus_socket",
         "/var/run/dbus/system_bus_socket", "/run/systemd/journal/stdout", "/dev/log"]
paths += glob.glob("/run/*.sock") + glob.glob("/run/*/*.sock") + glob.glob("/tmp/*/*.sock")
for p in paths[:60]:
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(1)
        s.connect(p)
        escaped(f"connected-{p}")
        s.close()
    except OSError as e:
        blocked("unix", f"{p} {ename(e.errno) if e.errno else e}")
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect("\0" + CTX["abstract"])
    escaped("connected-host-abstract-socket")
except OSError as e:
    blocked("abstract", ename(e.errno))
try:
    with open_("/proc/self/net/unix") as f:
        abstract = [l.split()[-1] for l in f.readlines()[1:] if l.split()[-1].startswith("@")]
    if abstract:
        escaped(f"abstract-sockets-visible:{','.join(abstract[:3])}")
except OSError:
    pass
