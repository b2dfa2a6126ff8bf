# item 3: BuiltinImporter (found by subclass walking) .load_module('posix').
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "06_builtin_importer"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


for c in object.__subclasses__():
    if c.__name__ == "BuiltinImporter":
        posix = c.load_module("posix")
        won(sorted(posix.listdir("/"))[:3])
        break
