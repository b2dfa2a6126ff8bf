# update_wrapper's default updated=("__dict__",) copies wrapped.__dict__ into the wrapper's: for
# a class that is its raw descriptors (the method type's __func__, the function type's
# __globals__), i.e. vars() of any object.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "107_update_wrapper_class_dict"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import functools
import random

got = {}
Catch = type("Catch", (), {"__dict__": property(lambda self: got)})


def descriptors(cls):
    got.clear()
    functools.update_wrapper(Catch(), cls)
    return dict(got)


func = descriptors(type(random.shuffle))["__func__"].__get__(random.shuffle)
module_globals = descriptors(type(func))["__globals__"].__get__(func)
won(module_globals["_os"].getcwd())
