# item 16: type.__subclasses__(type)[0].register.__builtins__.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "28_abcmeta_register_builtins"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


meta = type.__subclasses__(type)[0]
imp = meta.register.__builtins__["__import__"]
won(sorted(imp("os").listdir("/"))[:3])
