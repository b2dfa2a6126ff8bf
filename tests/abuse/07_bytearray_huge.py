# A terabyte request is refused inside the job (MemoryError); the host is unaffected.
# expect: status in error,memory_limit
# expect: stderr-contains=MemoryError
# limits: memory_mb=64 wall_ms=3000
try:
    b = bytearray(10**12)
    escaped("bytearray-1TB")
except MemoryError:
    blocked("bytearray-1TB", "MemoryError")
    raise
