# (data policy) numpy.compat.npy_load_module(name, file) is SourceFileLoader(name,
# file).load_module(): it runs a standard-library file as any module name and returns the real
# module, past the job's __import__ (importlib running a library file is an exec the hook
# allows). A name already loaded is re-run in place: "os" gives the real os. Found by a second
# red-team review.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "128_numpy_compat_load_module"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import numpy

real_os = numpy.compat.npy_load_module("os", "/usr/lib/python3.11/os.py")
won(real_os.getpid())
