# Socket families other than AF_UNIX are denied: raw AF_PACKET, AF_VSOCK, AF_NETLINK (the
# kernel's configuration interface), AF_ALG, AF_BLUETOOTH, raw IP, and AF_INET/AF_INET6 too.
# expect: status in ok,error,seccomp_violation
import socket
fams = {"AF_PACKET": (17, 3), "AF_VSOCK": (40, 1), "AF_NETLINK": (16, 3), "AF_ALG": (38, 5),
        "AF_BLUETOOTH": (31, 3), "AF_INET-raw": (2, 3), "AF_INET": (2, 1), "AF_INET6": (10, 1),
        "AF_KEY": (15, 3), "AF_X25": (9, 5)}
for name, (fam, typ) in fams.items():
    r, err = sc(41, fam, typ, 0)  # socket()
    if r >= 0:
        escaped(f"socket-{name}")
        os.close(r)
    else:
        blocked("socket", f"{name} {err}")
r, err = sc(41, 1, 1, 0)
print("AF_UNIX", "allowed" if r >= 0 else err)
