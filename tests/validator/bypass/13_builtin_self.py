# item 7: abs.__self__ is the real builtins module, whatever the guard installed.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "13_builtin_self"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


real = abs.__self__
won(sorted(real.__import__("os").listdir("/"))[:3])
