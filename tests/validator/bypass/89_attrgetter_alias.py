# an alias of operator.attrgetter: the static check only fired on the literal name.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "89_attrgetter_alias"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import operator
import random

ag = operator.attrgetter
g = ag("__init__.__glo" + "bals__")(random.Random)
won(sorted(g["_o" + "s"].listdir("/"))[:3])
