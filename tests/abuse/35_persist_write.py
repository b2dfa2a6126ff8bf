# Leaves files where a later job might look: /tmp, /dev/shm, /var/tmp, the working directory
# and its parent. 36_persist_read (run after this one) must find none of them.
# expect: status in ok,error
# expect: stdout-contains=persist
name = "codeq-abuse-persist-" + CTX["suite"]
for d in ("/tmp", "/dev/shm", "/var/tmp", ".", ".."):
    err = try_create(f"{d}/{name}")
    print("persist", d, err or "written")
