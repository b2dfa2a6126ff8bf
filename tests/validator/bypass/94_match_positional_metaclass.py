# positional class patterns read the attributes __match_args__ names; a metaclass
# __instancecheck__ makes anything match.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "94_match_positional_metaclass"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import random


class Always(type):
    def __instancecheck__(cls, instance):
        return True


class Init(metaclass=Always):
    __match_args__ = ("__init__",)


class Globals(metaclass=Always):
    __match_args__ = ("__glo" + "bals__",)


match random.Random:
    case Init(Globals(g)):
        won(sorted(g["_o" + "s"].listdir("/"))[:3])
