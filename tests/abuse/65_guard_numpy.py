# Regression guard: numpy imports and computes where it is installed (BLAS threads, mmap).
# needs: numpy
# expect: status=ok
# expect: stdout-contains=numpy-ok
# limits: memory_mb=256
np = imp("numpy")
a = np.arange(1000000, dtype=np.float64)
m = np.random.default_rng(1).random((200, 200))
if a.sum() == 499999500000.0 and np.linalg.inv(m).shape == (200, 200):
    print("numpy-ok")
