# Regression guard: a large allocation within the limit (150 MB touched under 256 MB) works.
# expect: status=ok
# expect: stdout-contains=alloc-ok
# limits: memory_mb=256
b = b"a" * (150 * 1024 * 1024)
l = list(range(10**6))
if len(b) == 150 * 1024 * 1024 and l[-1] == 10**6 - 1:
    print("alloc-ok")
