# The job's network namespace has only a loopback that is down: no host interfaces, no routes,
# no host sockets in its /proc/self/net (/proc/net, the same view, is not in its /proc).
# expect: status in ok,error
# host: listener
with open_("/proc/self/net/dev") as f:
    ifaces = [l.split(":")[0].strip() for l in f.readlines()[2:]]
print("interfaces:", ifaces)
for i in ifaces:
    if i != "lo":
        escaped(f"interface-{i}")
with open_("/proc/self/net/route") as f:
    if len(f.readlines()) > 1:
        escaped("routes-present")
with open_("/proc/self/net/tcp") as f:
    if any(f":{CTX['tcp_port']:04X}" in l for l in f):
        escaped("host-listener-in-proc-net-tcp")
try:
    with open_("/sys/class/net/lo/operstate") as f:
        if f.read().strip() not in ("down", "unknown"):
            escaped("loopback-up")
except OSError:
    pass
blocked("net-view", f"interfaces {ifaces}")
