# Regression guard: multiprocessing.shared_memory (a file in the job's own /dev/shm).
# In zygote mode execve is denied by design (docs/zygote.md), so the multiprocessing resource
# tracker, a separately exec'd interpreter, cannot start: talking to it fails with
# BrokenPipeError or PermissionError at whichever of its messages comes after the tracker's
# death — the create's or the attach's registration, or the unlink's unregistration (Python
# 3.11 registers on attach too) — or, when every write beats the death, succeeds. So the
# whole use of the segment, unlink included, is inside the try.
# expect: status=ok
# expect: stdout-contains=shm-ok
# expect-zygote: status=ok
# expect-zygote: stdout-contains=shm-
from multiprocessing import shared_memory
ok = None
try:
    shm = shared_memory.SharedMemory(create=True, size=1 << 20)
    shm.buf[:5] = b"hello"
    other = shared_memory.SharedMemory(name=shm.name)
    ok = bytes(other.buf[:5]) == b"hello"
    other.close()
    shm.close()
    shm.unlink()
except (BrokenPipeError, PermissionError) as e:
    if ok is False:
        raise SystemExit("SHM-BAD: the segment did not hold its bytes")
    print("shm-no-tracker", type(e).__name__)
    raise SystemExit(0)
print("shm-ok" if ok else "SHM-BAD: the segment did not hold its bytes")
