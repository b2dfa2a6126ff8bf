# Reads /etc/shadow and the host's secrets: not present in the job's filesystem view.
# expect: status in ok,error
# expect: result-not-contains=root:$
for path in ("/etc/shadow", "/etc/gshadow", "/etc/ssh/ssh_host_ed25519_key",
             "/etc/ssh/ssh_host_rsa_key", "/root/.bash_history", "/root/.ssh/id_rsa",
             "/root/.ssh/authorized_keys", "/root/.profile", "/etc/sudoers"):
    try:
        with open_(path, "rb") as f:
            data = f.read(64)
        escaped(f"read-{path}")
    except OSError as e:
        blocked("read", f"{path} {ename(e.errno)}")
