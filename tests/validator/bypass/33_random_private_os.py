# item 19: random._os, a module reached through an allowed module.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "33_random_private_os"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import random

won(sorted(random._os.listdir("/"))[:3])
