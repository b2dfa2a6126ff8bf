# TCP to the host's loopback listener, to the Kafka port, to the cloud metadata address and to
# a public address; UDP to the host's listener: all fail (no route: an empty network namespace,
# or socket families other than AF_UNIX denied). The host listener must receive nothing.
# expect: status in ok,error,seccomp_violation
# host: listener
import socket
for addr in (("127.0.0.1", CTX["tcp_port"]), ("127.0.0.1", 9092), ("169.254.169.254", 80),
             ("1.1.1.1", 53), ("10.0.2.2", 22)):
    try:
        s = socket.create_connection(addr, timeout=1)
        escaped(f"tcp-connect-{addr[0]}:{addr[1]}")
        s.close()
    except OSError as e:
        blocked("tcp", f"{addr} {ename(e.errno) if e.errno else e}")
try:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.sendto(b"codeq-abuse-udp", ("127.0.0.1", CTX["udp_port"]))
    blocked("udp-sent-but-must-not-arrive")
except OSError as e:
    blocked("udp", ename(e.errno))
