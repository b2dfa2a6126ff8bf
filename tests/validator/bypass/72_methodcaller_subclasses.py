# operator.methodcaller('__subclasses__') walks to os._wrap_close.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "72_methodcaller_subclasses"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import operator

for c in operator.methodcaller("__subcl" + "asses__")(object):
    if c.__name__ == "_wrap_close":
        system = operator.attrgetter("__init__.__glo" + "bals__")(c)["system"]
        if system("true") == 0:
            won("os.system ran true")
        break
