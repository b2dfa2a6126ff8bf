# Regression guard: multiprocessing.shared_memory (a file in the job's own /dev/shm).
# expect: status=ok
# expect: stdout-contains=shm-ok
from multiprocessing import shared_memory
shm = shared_memory.SharedMemory(create=True, size=1 << 20)
shm.buf[:5] = b"hello"
other = shared_memory.SharedMemory(name=shm.name)
ok = bytes(other.buf[:5]) == b"hello"
other.close()
shm.close()
shm.unlink()
print("shm-ok" if ok else "shm-bad")
