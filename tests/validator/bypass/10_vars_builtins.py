# item 6: vars(__builtins__)['__import__'].
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "10_vars_builtins"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


imp = vars(__builtins__)["__import__"]
won(sorted(imp("os").listdir("/"))[:3])
