# The host's page cache is shared with the job through its /usr: posix_fadvise(DONTNEED or
# NOREUSE) on a host file, and madvise COLD, PAGEOUT, COLLAPSE or REMOVE on a mapping of one,
# must not evict (or change) the host's cached pages. The runner caches two files before the
# job and checks with fincore afterwards; the calls themselves may succeed (as no-ops) or fail.
# expect: status=ok
# expect: stdout-contains=advised
# host: pagecache
import mmap

fadv_file, madv_file = CTX["pagecache"]
fd = os.open(fadv_file, os.O_RDONLY)
for name, advice in (("DONTNEED", os.POSIX_FADV_DONTNEED), ("NOREUSE", os.POSIX_FADV_NOREUSE)):
    for off, length in ((0, 0), (0, os.fstat(fd).st_size)):
        try:
            os.posix_fadvise(fd, off, length, advice)
            print("answered: fadvise", name, flush=True)
        except OSError as e:
            blocked("fadvise-" + name, ename(e.errno))
os.close(fd)
fd = os.open(madv_file, os.O_RDONLY)
size = os.fstat(fd).st_size
m = mmap.mmap(fd, size, prot=mmap.PROT_READ)
sum(m[i] for i in range(0, size, 4096))  # map the cached pages into this process
# MADV_REMOVE, MADV_COLD, MADV_PAGEOUT, MADV_COLLAPSE (3.11's mmap has only the first)
advise(m, (("REMOVE", 9), ("COLD", 20), ("PAGEOUT", 21), ("COLLAPSE", 25)))
m.close()
os.close(fd)
print("advised")
