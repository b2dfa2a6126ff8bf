# (data policy) numpy.load(allow_pickle=True): a pickle's globals are resolved by _pickle with
# the real import and getattr, so `sys.modules` (sys is restricted to a few attributes for the
# job) handed over the real modules table. Found by a review of the guard's find_class rule.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "117_numpy_pickle_restricted_attr"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import numpy

with open("data.pkl", "wb") as f:
    f.write(b"csys\nmodules\n.")
modules = numpy.load("data.pkl", allow_pickle=True)
won(modules["os"].getpid())
