# item 38: an allowed pure-Python module (typing) evals string annotations.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "58_typing_get_type_hints_eval"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import typing


def f(x):
    return x


f.__annotations__ = {"x": "__imp" + "ort__('os').listdir('/')"}
won(sorted(typing.get_type_hints(f)["x"])[:3])
