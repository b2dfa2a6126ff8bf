# item 15: __eq__ defined through type() runs during an innocent comparison.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "27_eq_hook_in_type"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


def eq(self, other):
    g = won.__globals__
    imp = getattr(g["__builtins__"], "__imp" + "ort__", None) or g["__builtins__"]["__imp" + "ort__"]
    won(sorted(imp("os").listdir("/"))[:3])
    return True


E = type("E", (), {"__eq__": eq, "__hash__": None})
print(E() == 1)
