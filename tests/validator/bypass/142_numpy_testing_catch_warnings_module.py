# (data policy) numpy.testing (a public, allowed submodule, loaded on first access) re-exports
# classes built on standard-library modules the policy refuses: clear_and_catch_warnings is a
# subclass of warnings.catch_warnings, whose __init__ keeps `self._module =
# sys.modules['warnings']`, the real warnings module, as a plain single-underscore instance
# attribute. The proxy filters only a module's own attributes that are modules; the objects
# an allowed module hands out (classes, instances) are not proxied, so their attributes lead
# to real modules (warnings.sys is the real sys). Same object as bypass 08, reached through an
# allowed module instead of object.__subclasses__().
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "142_numpy_testing_catch_warnings_module"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import numpy as np

real_warnings = np.testing.clear_and_catch_warnings()._module
real_sys = real_warnings.sys
won("%s pid=%s" % (real_sys, real_sys.modules["os"].getpid()))
