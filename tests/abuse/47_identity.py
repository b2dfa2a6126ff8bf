# Identity: an unprivileged uid/gid, no capabilities in any set, no_new_privs, no supplementary
# groups, a seccomp filter in place.
# expect: status in ok,error
with open_("/proc/self/status") as f:
    st = dict(l.split(":", 1) for l in f if ":" in l)
print({k: st[k].strip() for k in ("Uid", "Gid", "Groups", "CapEff", "CapPrm", "CapBnd", "CapAmb",
                                  "NoNewPrivs", "Seccomp") if k in st})
if os.getuid() == 0 or os.geteuid() == 0 or "0" in st["Uid"].split():
    escaped("runs-as-root")
if os.getgid() == 0 or "0" in st["Gid"].split():
    escaped("gid-0")
for k in ("CapEff", "CapPrm", "CapBnd", "CapAmb", "CapInh"):
    if int(st.get(k, "0").strip(), 16):
        escaped(f"{k}-nonzero")
if st.get("NoNewPrivs", "0").strip() != "1":
    escaped("no_new_privs-off")
if st.get("Seccomp", "0").strip() != "2":
    escaped("no-seccomp-filter")
blocked("identity", f"uid {os.getuid()} gid {os.getgid()}")
