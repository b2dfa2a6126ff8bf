# The guard's own frames were trusted with any write: getattr(obj, "x") is the guard's, checks
# "x", and the real getattr then runs a property whose getter is C only (partial of
# dict.fromkeys over a map of object.__setattr__), so the write ran in the guard's frame.
# Found by a red-team review of 121's fix.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "125_guard_getattr_property"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import functools


def f(x=1):
    return x


class J:
    x = property(functools.partial(dict.fromkeys,
                                   map(object.__setattr__, [f], ["__def" + "aults__"], [(2,)])))


getattr(J(), "x")
if f() == 2:
    won(f())
