# Regression guard: multiprocessing.shared_memory (a file in the job's own /dev/shm).
# In zygote mode execve is denied by design (docs/zygote.md), so the multiprocessing resource
# tracker, a separately exec'd interpreter, cannot start: registering the segment fails with
# BrokenPipeError or PermissionError, or, when the write beats the tracker's death, succeeds.
# expect: status=ok
# expect: stdout-contains=shm-ok
# expect-zygote: status=ok
# expect-zygote: stdout-contains=shm-
from multiprocessing import shared_memory
try:
    shm = shared_memory.SharedMemory(create=True, size=1 << 20)
except (BrokenPipeError, PermissionError) as e:
    print("shm-no-tracker", type(e).__name__)
    raise SystemExit(0)
shm.buf[:5] = b"hello"
other = shared_memory.SharedMemory(name=shm.name)
ok = bytes(other.buf[:5]) == b"hello"
other.close()
shm.close()
shm.unlink()
print("shm-ok" if ok else "SHM-BAD: the segment did not hold its bytes")
