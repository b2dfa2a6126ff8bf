# `from M import name` runs IMPORT_FROM on what the job's __import__ returned (the proxy of M). When
# the proxy has no such attribute, CPython falls back to sys.modules[f"{M.__name__}.{name}"]
# (issue 17636, circular relative imports), reading __name__ from the proxy itself. A proxy is a
# plain module whose __name__ is writable (and __name__ is a harmless dunder): set to "os", the
# fallback hands out the real sys.modules["os.path"], i.e. posixpath, whose globals hold the real
# os module. All of it is bytecode in main.py: no getattr, no import hook, no audit event.
# The guard knew the fallback for real submodule names (numpy.ctypeslib) but not a renamed proxy.
# Found by a fifth red-team review (strict policy).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "148_import_from_proxy_name_fallback"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import json

json.__name__ = "os"
from json import path  # noqa: E402  -> sys.modules["os.path"], the real posixpath

real_os = path.os
won("module=%s os.getpid()=%s os_has_system=%s" % (
    path.__name__, real_os.getpid(), callable(real_os.system)))
