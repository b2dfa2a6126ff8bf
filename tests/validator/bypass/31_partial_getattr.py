# item 18: functools.partial(getattr, module).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "31_partial_getattr"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import functools
import random

os_ = functools.partial(getattr, random)("_o" + "s")
won(sorted(os_.listdir("/"))[:3])
