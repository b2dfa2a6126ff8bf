# item 21: sys._getframe().f_builtins['__import__'] via typing.sys.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "37_getframe_builtins"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import typing

imp = typing.sys._getframe().f_builtins["__import__"]
won(sorted(imp("os").listdir("/"))[:3])
