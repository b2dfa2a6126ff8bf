# item 35: __loader__.load_module('_posixsubprocess') (or its builtin importer).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "55_loader_posixsubprocess"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import math

try:
    m = __loader__.load_module("_posixsubprocess")
except ImportError:
    # __main__'s loader is a SourceFileLoader; math's is BuiltinImporter, which takes any built-in.
    m = math.__loader__.load_module("_posixsubprocess")
if m is not None and callable(getattr(m, "fork_exec", None)):
    won("got _posixsubprocess.fork_exec")
