# item 18: operator.attrgetter('_os') on an allowed module.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "32_attrgetter_chain"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import operator
import random

os_ = operator.attrgetter("_o" + "s")(random)
won(sorted(os_.listdir("/"))[:3])
