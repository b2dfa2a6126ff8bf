# (data policy) numpy.ctypeslib hands out ctypes types (c_intp, as_ctypes_type of an
# overlapping structured dtype: a Union). Their mro() gives _SimpleCData and Union, so 116's
# primitive (a Union of an address and a py_object: any address made an object, no audit
# event) comes back without ndarray.ctypes. Found by a red-team review.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "123_numpy_ctypeslib_union"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import numpy
import numpy.ctypeslib as cl

simple = cl.c_intp.mro()[1]
union = cl.as_ctypes_type(numpy.dtype({"names": ["a", "b"], "formats": [numpy.intp, numpy.intp],
                                        "offsets": [0, 0]})).mro()[1]


class PyObj(simple):
    _type_ = "O"


class Word(union):
    _fields_ = [("addr", cl.c_intp), ("obj", PyObj)]


w = Word()
w.addr = id(len)
if w.obj is len:
    won("any address made an object")
