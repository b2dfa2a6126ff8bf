# The job's writable tmpfs (/work, /tmp, /dev/shm) is noexec: a binary it drops there (here a
# copy of /usr/bin/true) cannot be executed or mapped executable, so it can bring no native
# code of its own beyond what the interpreter loads.
# expect: status in ok,error,seccomp_violation
# expect: stdout-contains=BLOCKED:exec
import mmap
sp = imp("sub" + "process")
with open_("/usr/bin/true", "rb") as src:
    data = src.read()
for d in (".", "/tmp", "/dev/shm"):
    path = f"{d}/mytrue"
    with open_(path, "wb") as f:
        f.write(data)
    os.chmod(path, 0o755)
    try:
        r = sp.run([path], timeout=2)
        escaped(f"exec-from-{d}-rc{r.returncode}")
    except OSError as e:
        blocked("exec", f"{d} {ename(e.errno)}")
    with open_(path, "rb") as f:
        try:
            m = mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC)
            escaped(f"mmap-exec-from-{d}")
            m.close()
        except OSError as e:
            blocked("mmap-exec", f"{d} {ename(e.errno)}")
