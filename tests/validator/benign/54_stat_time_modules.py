"""stat and time modules in deterministic ways"""
import stat
import time

mode = stat.S_IFREG | 0o644
print(stat.filemode(mode), stat.S_ISDIR(mode), stat.S_ISREG(mode), oct(stat.S_IMODE(mode)))
t = time.gmtime(0)
print(time.strftime("%Y-%m-%d %H:%M:%S", t), t.tm_yday)
print(time.strftime("%a %d %b %Y", time.strptime("2024-07-04", "%Y-%m-%d")))
start = time.perf_counter()
elapsed = time.perf_counter() - start
print("elapsed non-negative:", elapsed >= 0)
