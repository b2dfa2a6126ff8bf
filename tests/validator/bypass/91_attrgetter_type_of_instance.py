# type() of a getter made with a harmless literal name is the unchecked constructor.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "91_attrgetter_type_of_instance"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import operator
import random

getter_class = type(operator.attrgetter("real"))
g = getter_class("__init__.__glo" + "bals__")(random.Random)
won(sorted(g["_o" + "s"].listdir("/"))[:3])
