# item 18: getattr called through map() on an allowed module's private os.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "30_map_getattr"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import random

os_ = list(map(getattr, [random], ["_o" + "s"]))[0]
won(sorted(os_.listdir("/"))[:3])
