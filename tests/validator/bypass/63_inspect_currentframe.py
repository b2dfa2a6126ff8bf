# inspect.currentframe().f_builtins.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "63_inspect_currentframe"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import inspect

imp = inspect.currentframe().f_builtins["__import__"]
won(sorted(imp("os").listdir("/"))[:3])
