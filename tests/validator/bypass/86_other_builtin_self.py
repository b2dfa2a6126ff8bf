# item 7: __self__ of a less obvious builtin (max), then its __dict__.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "86_other_builtin_self"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


real = max.__self__
imp = real.__dict__["__imp" + "ort__"]
won(sorted(imp("os").listdir("/"))[:3])
