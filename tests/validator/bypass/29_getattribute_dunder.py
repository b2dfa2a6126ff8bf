# item 17: f.__getattribute__('__glo'+'bals__') hides the dunder name.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "29_getattribute_dunder"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


def f():
    return 0


g = f.__getattribute__("__glo" + "bals__")
b = g["__builtins__"]
imp = b["__import__"] if isinstance(b, dict) else b.__getattribute__("__import__")
won(sorted(imp("os").listdir("/"))[:3])
