# Enum._convert_(name, module, filter) turns a loaded module's globals into members (and writes
# members back into it): random's _os, by the name of a module the program chose.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "109_enum_convert_module_globals"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import enum
import random

E = enum.Enum._convert_("E", "random", lambda name: name == "_os")
won(E["_os"].value.getcwd())
