# typing.get_args() hands out ForwardRef objects; _evaluate() evals their string with real builtins.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "98_forwardref_evaluate"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import typing

ref = typing.get_args(typing.List["__imp" + "ort__('os').listdir('/')"])[0]
won(sorted(ref._evaluate({}, {}, frozenset()))[:3])
