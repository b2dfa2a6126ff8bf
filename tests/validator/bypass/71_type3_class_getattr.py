# type() three-arg with __getattr__ that reaches a module's private attribute.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "71_type3_class_getattr"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import random

Proxy = type("Proxy", (), {"__getattr__": lambda self, n: vars(random)["_" + n]})
won(sorted(Proxy().os.listdir("/"))[:3])
