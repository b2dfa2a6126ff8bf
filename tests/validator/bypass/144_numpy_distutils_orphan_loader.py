# (data policy) Every numpy submodule is allowed but numpy.ctypeslib and numpy.compat, and
# numpy.distutils holds the same kind of loader as compat: misc_util.exec_mod_from_location(name,
# file) runs any library file as a new module and returns the real module object (importlib's
# exec of a sys.path file is one the hook allows), like 128. `import numpy.distutils` itself
# fails under the hook (its log module rebinds a __class__), but by then numpy.distutils.misc_util
# was imported completely and stays in sys.modules after the parent package is removed: `from
# numpy.distutils.misc_util import ...` is then served from sys.modules without the parent, and
# the guard proxies the orphan like any allowed module. A fresh copy of os.py holds the real sys.
# (misc_util.get_frame() likewise returns real frames.)
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "144_numpy_distutils_orphan_loader"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import numpy as np

try:
    import numpy.distutils  # refused half-way, after misc_util is loaded
except PermissionError:
    pass
from numpy.distutils.misc_util import exec_mod_from_location

os_copy = exec_mod_from_location("codeq_os_copy", "/usr/lib/python3.11/os.py")
real_sys = os_copy.sys
won("%s pid=%s" % (real_sys, real_sys.modules["os"].getpid()))
