# (data policy) The same import by a name the job chose (a function's __module__, imported by
# the pickler numpy runs) of a module whose import-time code prints: `this`. Any module outside
# the policy ran its top-level code. Found by a red-team review. Prints the marker only if the
# forbidden operation succeeded. Run ONLY through `codeq run`.
import contextlib
import io

import numpy as np

NAME = "169_pickle_imports_this"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


def f():
    return 0


f.__module__ = "this"
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    try:
        np.save("x.npy", np.array([f], dtype=object))
    except Exception:
        pass
if "Beautiful is better" in buf.getvalue():
    won(buf.getvalue()[:40])
