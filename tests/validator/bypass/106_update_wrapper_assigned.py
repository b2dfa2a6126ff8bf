# functools.update_wrapper(wrapper, wrapped, assigned) reads getattr(wrapped, name) for each
# name and sets it on the wrapper, whose __setattr__ is the program's: __func__, __globals__,
# then the real __import__ and a module the guard never lets main.py load. Found by fuzz_guard.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "106_update_wrapper_assigned"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import functools
import random

got = {}


class Catch:
    def __setattr__(self, name, value):
        got[name] = value


def read(obj, name):
    functools.update_wrapper(Catch(), obj, assigned=(name,), updated=())
    return got[name]


module_globals = read(read(random.shuffle, "__func__"), "__globals__")
real_import = module_globals["__builtins__"]["__import__"]
won(real_import("_posixsubprocess").fork_exec)
