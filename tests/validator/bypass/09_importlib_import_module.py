# item 5: importlib.import_module('os').
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "09_importlib_import_module"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import importlib

m = importlib.import_module("os")
won(sorted(m.listdir("/"))[:3])
