# Creates a new file (never modifies one) in every system directory: the root is read-only
# and these are not the host's directories; the host must show no marker.
# expect: status in ok,error
# expect: stdout-contains=BLOCKED:write
for d in ("/", "/etc", "/usr", "/usr/lib", "/usr/local", "/lib", "/bin", "/var", "/var/tmp",
          "/root", "/home", "/opt", "/srv", "/run", "/dev", "/proc", "/sys"):
    err = try_create(f"{d.rstrip('/')}/{MARK}")
    if err is None:
        escaped(f"write-{d}")
    else:
        blocked("write", f"{d} {err}")
