# item 8: license.__call__.__builtins__['__import__'].
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "15_license_call_builtins"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


imp = license.__call__.__builtins__["__import__"]
won(sorted(imp("os").listdir("/"))[:3])
