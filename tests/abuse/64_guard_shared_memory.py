# Regression guard: multiprocessing.shared_memory (a file in the job's own /dev/shm).
# In zygote mode execve is denied by design (docs/zygote.md), so the multiprocessing resource
# tracker, a separately exec'd interpreter, cannot start: registering the segment fails with
# BrokenPipeError or PermissionError at whichever registration comes after the tracker's death
# (creating the segment or attaching to it: on a slow machine the create's write can beat the
# death and the attach's cannot), or, when every write beats it, succeeds.
# expect: status=ok
# expect: stdout-contains=shm-ok
# expect-zygote: status=ok
# expect-zygote: stdout-contains=shm-
from multiprocessing import shared_memory
try:
    shm = shared_memory.SharedMemory(create=True, size=1 << 20)
    shm.buf[:5] = b"hello"
    other = shared_memory.SharedMemory(name=shm.name)
except (BrokenPipeError, PermissionError) as e:
    print("shm-no-tracker", type(e).__name__)
    raise SystemExit(0)
ok = bytes(other.buf[:5]) == b"hello"
other.close()
shm.close()
shm.unlink()
print("shm-ok" if ok else "SHM-BAD: the segment did not hold its bytes")
