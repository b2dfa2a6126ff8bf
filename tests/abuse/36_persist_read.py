# Runs after 35_persist_write: no file of that earlier job is visible anywhere this job can look
# (its /tmp, /dev/shm, /var/tmp, working directory, the parent and its siblings).
# after: 35_persist_write
# expect: status in ok,error
# expect: stdout-contains=searched
name = "codeq-abuse-persist-" + CTX["suite"]
for d in ("/tmp", "/dev/shm", "/var/tmp", ".", ".."):
    if os.path.exists(f"{d}/{name}"):
        escaped(f"persisted-{d}")
try:
    for sib in os.listdir("..")[:500]:
        if os.path.exists(f"../{sib}/{name}"):
            escaped(f"sibling-workdir-{sib}")
except OSError as e:
    blocked("list-parent", ename(e.errno))
print("searched")
