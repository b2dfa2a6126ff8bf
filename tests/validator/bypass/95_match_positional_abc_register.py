# positional class pattern on an ABC that registered the function type (no metaclass of ours).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "95_match_positional_abc_register"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import abc
import random


class Func(abc.ABC):
    pass


Func.__match_args__ = ("__glo" + "bals__",)
Func.register(type(won))

match random.Random.__init__:
    case Func(g):
        won(sorted(g["_o" + "s"].listdir("/"))[:3])
