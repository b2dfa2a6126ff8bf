# Anonymous mmap of 512 MB, every page touched: the memory limit holds for mappings too.
# expect: status=memory_limit
# limits: memory_mb=64 wall_ms=3000
import mmap
m = mmap.mmap(-1, 512 * 1024 * 1024)
for off in range(0, len(m), 4096):
    m[off] = 1
escaped("touched-512MB-mmap")
