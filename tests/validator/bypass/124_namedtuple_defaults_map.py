# namedtuple may set its own __new__'s __defaults__, and its frame iterates the job's
# `defaults`: a map over object.__setattr__ (C only, no frame of its own) runs inside it, so
# the write looked like namedtuple's. The guard now checks the object written, not only the
# frame. Found by a red-team review of 121's fix.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "124_namedtuple_defaults_map"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import collections


def f(x=1):
    return x


collections.namedtuple("P", "a", defaults=map(object.__setattr__, [f], ["__def" + "aults__"], [(2,)]))
if f() == 2:
    won(f())
