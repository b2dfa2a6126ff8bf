# The guard's proxy of a module with its own __getattr__ (numpy, under data) turned the real
# module's AttributeError into its own with `raise ... from None` inside the except block: the
# original stays the new error's __context__, and its .obj is the real numpy, whose attributes
# lead to os. Found with fuzz_guard's oracle (data policy).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "112_numpy_getattr_context"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import numpy

try:
    numpy.no_such_name_here
except AttributeError as e:
    real_numpy = getattr(e.__context__, 'obj', None)
    if real_numpy is not None:
        won(real_numpy.core.overrides.os.getcwd())
