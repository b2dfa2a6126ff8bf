# item 3: math.__loader__.load_module('posix') through an allowed module's loader.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "07_module_loader"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import math

posix = math.__loader__.load_module("posix")
won(sorted(posix.listdir("/"))[:3])
