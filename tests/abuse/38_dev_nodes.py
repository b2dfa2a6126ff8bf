# /dev is private: null, zero, urandom (and the fd links), no disks, memory, kernel log or
# consoles. Probes read 1 byte, never write.
# expect: status in ok,error
# expect: stdout-contains=urandom-ok
with open_("/dev/urandom", "rb") as f:
    if len(f.read(8)) == 8:
        print("urandom-ok")
allowed = {"null", "zero", "urandom", "random", "full", "fd", "stdin", "stdout", "stderr",
           "shm", "pts", "ptmx", "mqueue"}
extra = sorted(set(os.listdir("/dev")) - allowed)
if extra:
    escaped(f"dev-has:{','.join(extra[:6])}")
for dev in ("/dev/mem", "/dev/kmem", "/dev/port", "/dev/kmsg", "/dev/vda", "/dev/sda",
            "/dev/nvme0n1", "/dev/console", "/dev/kvm", "/dev/fuse", "/dev/net/tun"):
    try:
        fd = os.open(dev, os.O_RDONLY | os.O_NONBLOCK)
        escaped(f"opened-{dev}")
        os.close(fd)
    except OSError as e:
        blocked("dev", f"{dev} {ename(e.errno)}")
