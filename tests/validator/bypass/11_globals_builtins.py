# item 6: globals()['__builtins__'].__dict__['__import__'].
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "11_globals_builtins"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


b = globals()["__builtins__"]
d = b if isinstance(b, dict) else b.__dict__
won(sorted(d["__import__"]("os").listdir("/"))[:3])
