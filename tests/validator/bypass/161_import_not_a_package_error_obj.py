# `import random.codeq_missing` is an allowed import (a package allows its submodules, and the
# guard's __import__ checks only the top-level name), so the guard hands it to the real import.
# importlib's _find_and_load_unlocked reads parent_module.__path__ on the REAL parent module
# (sys.modules["random"]); random is no package, so the AttributeError is caught and replaced:
# `raise ModuleNotFoundError(...) from None`. `from None` only hides the original: it stays the
# new error's __context__ (a harmless dunder), and CPython filled in its .obj (a plain attribute
# name) with the object looked at: the real random module, whose _os is the real os. The guard
# passes the real import's exceptions to the job unchanged. Class: exceptions raised by library
# code (here the import system itself, driven by the guard's own real_import) carry library
# objects in their __context__/.obj (112/122/141's class, now with the import machinery as the
# library: any allowed module that is not a package works, and a package's submodule that is a
# plain module too, e.g. `import json.decoder.x`).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "161_import_not_a_package_error_obj"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


try:
    import random.codeq_missing
except ImportError as e:
    err = e
real_random = err.__context__.obj
real_os = real_random._os
won("random=%r os.getpid()=%s has_system=%s" % (
    real_random, real_os.getpid(), callable(real_os.system)))
