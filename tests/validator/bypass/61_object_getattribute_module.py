# ModuleType/object.__getattribute__ called directly on a guarded module.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "61_object_getattribute_module"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import random

d = object.__getattribute__(random, "__di" + "ct__")
won(sorted(d["_o" + "s"].listdir("/"))[:3])
