# item 38: typing evaluates a forward reference string when a NamedTuple's hints are read.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "88_typing_forwardref_eval"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import typing


class Row(typing.NamedTuple):
    x: "__imp" "ort__('os').listdir('/')"


won(sorted(typing.get_type_hints(Row)["x"])[:3])
