# operator.methodcaller through functools.partial: attribute traversal by a computed name.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "90_methodcaller_partial"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import functools
import operator

subclasses = functools.partial(operator.methodcaller, "__subcl" + "asses__")()
for c in subclasses(object):
    if c.__name__ == "_wrap_close":
        g = functools.partial(operator.attrgetter, "__init__.__glo" + "bals__")()(c)
        won(sorted(g["listdir"]("/"))[:3])
        break
