# item 2: ().__class__.__base__.__subclasses__() -> os._wrap_close.__init__.__globals__['system'].
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "05_subclasses_wrap_close"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


for c in ().__class__.__base__.__subclasses__():
    if c.__name__ == "_wrap_close":
        system = c.__init__.__globals__["system"]
        if system("true") == 0:
            won("os.system ran true")
        break
