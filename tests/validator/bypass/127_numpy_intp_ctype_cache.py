# (data policy) numpy.ctypeslib's import asked numpy.core._internal for the intp ctypes type
# while ctypes was still the real module, and _getintp_ctype.cache kept ctypes.c_long; the
# guard's `_internal.ctypes = None` did not clear it. ndarray.ctypes.shape is then a real
# (c_long * n) array, whose _type_.mro() gives _SimpleCData, i.e. a py_object type: with numpy
# viewing its buffer, any address made an object. Found by a second red-team review.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "127_numpy_intp_ctype_cache"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import numpy

shape = numpy.zeros(1).ctypes.shape
simple = type(shape)._type_.mro()[1]


class PyObj(simple):
    _type_ = "O"


cell = (PyObj * 1)()
words = numpy.frombuffer(cell, dtype=numpy.intp)
keep = [len]
words[0] = id(len)
made = cell[0] is len
words[0] = 0  # no reference of len's to drop when cell goes
if made:
    won("any address made an object")
