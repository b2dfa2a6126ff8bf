# item 9: a function's __globals__['__builtins__'] leads back to __import__.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "16_function_globals"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


def f():
    return 0


b = f.__globals__["__builtins__"]
imp = b["__import__"] if isinstance(b, dict) else b.__import__
won(sorted(imp("os").listdir("/"))[:3])
