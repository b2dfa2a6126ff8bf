# Like 115, but with no ctypes call at all: a Union over an address field and a py_object
# field turns any address into an object, and creating ctypes types and reading their fields
# raise no audit event; so refusing ctypes' events is not enough: numpy must not hand out the
# module (its ndarray.ctypes._ctypes). Found by a review of the fix for 115 (data policy).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "116_numpy_ctypes_union"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import numpy as np

ct = np.zeros(1).ctypes._ctypes


class Word(ct.Union):
    _fields_ = [("addr", ct.c_ssize_t), ("obj", ct.py_object)]


def at(addr):
    w = Word()
    w.addr = addr
    return w.obj


won(type(at(id(len))).__name__)
