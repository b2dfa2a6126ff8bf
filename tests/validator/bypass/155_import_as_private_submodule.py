# (data policy) `import a.b._c as m` compiles (3.11) to IMPORT_NAME "a.b._c" (fromlist None)
# followed by one IMPORT_FROM per component, run on what IMPORT_NAME returned. For a private
# submodule the guard's __import__ loads the real module and returns the proxy of the
# top-level package; IMPORT_FROM then asks that proxy for "b" (a proxied submodule) and the
# proxied "b" for "_c", which its lazy __getattr__ refuses (private name) with an
# AttributeError. CPython's IMPORT_FROM then falls back to sys.modules[b.__name__ + "._c"],
# and b's proxy carries the real name "numpy.polynomial": the job gets the REAL private
# module. The from_view() fix (148/154) only covers `from M import x`, not `import M.x as y`.
# numpy.__config__ (and numpy.polynomial._polybase) did `import os, sys`.
# Found by a sixth red-team review (data policy).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "155_import_as_private_submodule"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import numpy.__config__ as config
import numpy.polynomial._polybase as polybase

real_sys = config.sys
real_os = polybase.os
won("%s %s modules=%d pid=%s" % (config, real_sys, len(real_sys.modules), real_os.getpid()))
