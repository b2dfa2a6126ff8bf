# A page of the host's /usr being read is locked for every reader, the host's too, until its
# read completes, and a job's reads wait in its cgroup's I/O throttle: advice that queues reads
# ahead of use let one job queue 9,295 single-page reads in 24 ms and stall a host process
# reading one of those pages for 7.7 s (a red-team review of 2026-12-06). posix_fadvise
# WILLNEED and SEQUENTIAL, readahead() and madvise WILLNEED / POPULATE_READ on files the runner
# dropped from the host's cache must read nothing: the files are still out of the cache after
# the job. The calls themselves may succeed (as no-ops) or fail.
# expect: status=ok
# expect: stdout-contains=advised
# host: coldcache
import ctypes
import mmap
import time

fadv_file, madv_file = CTX["coldcache"]
fd = os.open(fadv_file, os.O_RDONLY)
size = os.fstat(fd).st_size
for off in range(0, size, 8192):  # one page in two: no two requests merge
    for name, advice in (("WILLNEED", os.POSIX_FADV_WILLNEED),
                         ("SEQUENTIAL", os.POSIX_FADV_SEQUENTIAL)):
        try:
            os.posix_fadvise(fd, off, 4096, advice)
        except OSError as e:
            blocked("fadvise-" + name, ename(e.errno))
print("answered: fadvise WILLNEED, SEQUENTIAL", flush=True)
libc = ctypes.CDLL(None, use_errno=True)
if libc.readahead(fd, ctypes.c_longlong(0), ctypes.c_size_t(size)) != 0:
    blocked("readahead", ename(ctypes.get_errno()))
else:
    print("answered: readahead", flush=True)
os.close(fd)
fd = os.open(madv_file, os.O_RDONLY)
m = mmap.mmap(fd, os.fstat(fd).st_size, prot=mmap.PROT_READ)
advise(m, (("WILLNEED", 3), ("POPULATE_READ", 22)))
m.close()
os.close(fd)
time.sleep(0.5)  # what was queued completes meanwhile (50 MB/s: these files in ms)
print("advised")
