# item 37: except* and AttributeError.obj hand back the unwrapped module.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "57_except_star_attr_obj"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import random

try:
    try:
        random.no_such_attribute_here
    except AttributeError as e:
        raise ExceptionGroup("g", [e])
except* AttributeError as eg:
    real = eg.exceptions[0].obj
    os_ = vars(real)["_o" + "s"]
    won(sorted(os_.listdir("/"))[:3])
