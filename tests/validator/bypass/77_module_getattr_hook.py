# a module-level __getattr__ installed on an allowed module resolves private names.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "77_module_getattr_hook"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import json

import random

# PEP 562: a module's __getattr__ answers names it lacks; installed on an allowed module it can
# serve anything the program reaches through vars() of another allowed module.
json.__getattr__ = lambda n: vars(random)["_" + n]
won(sorted(json.os.listdir("/"))[:3])
