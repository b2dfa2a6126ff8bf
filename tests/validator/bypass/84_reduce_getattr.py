# item 18: functools.reduce(getattr, names, module) walks attributes without a call to getattr.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "84_reduce_getattr"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import functools
import random

os_ = functools.reduce(getattr, ["_o" + "s"], random)
won(sorted(os_.listdir("/"))[:3])
