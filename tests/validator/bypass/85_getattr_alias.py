# item 1/18: getattr rebound to another name before the call.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "85_getattr_alias"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import random

fetch = getattr
os_ = fetch(random, "".join(["_", "o", "s"]))
won(sorted(os_.listdir("/"))[:3])
