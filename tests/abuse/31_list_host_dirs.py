# The job's root is minimal: no host /root, /home, /var, /work, /srv, /opt, /mnt contents, no
# worker configuration or source tree, and no host /tmp (another job's or the worker's files).
# expect: status in ok,error
for d in ("/root", "/home", "/var/log", "/var/lib", "/work", "/srv", "/opt", "/mnt", "/media",
          "/etc/codeq", "/boot", "/lost+found", "/var/spool", "/snap"):
    try:
        if os.path.samefile(d, "."):
            continue  # the job's own working directory may be mounted at one of these
        names = os.listdir(d)
    except OSError as e:
        blocked("list", f"{d} {ename(e.errno)}")
        continue
    if names:
        escaped(f"list-{d}:{','.join(sorted(names)[:3])}")
try:
    tmp = [n for n in os.listdir("/tmp") if not n.startswith(MARK)]
except OSError:
    tmp = []
if tmp:
    escaped(f"host-tmp-visible:{','.join(sorted(tmp)[:3])}")
