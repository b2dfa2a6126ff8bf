# functools.update_wrapper (patched) judged "__dict__" in `assigned` (not `updated`) by the type
# of wrapped only: setattr(wrapper, "__dict__", getattr(wrapped, "__dict__")). A types.GenericAlias
# forwards the read to its origin, so GenericAlias(type, ()) hands type's raw class dict to the
# wrapper's __setattr__, a job method: __subclasses__ lists object's subclasses, BuiltinImporter
# among them. The `updated` form of the same read is 136; this is its sibling, left by that fix.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "138_update_wrapper_assigned_dict"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import functools

GA = type(list[int])
got = {}


class Catch:
    def __setattr__(self, name, value):
        got[name] = value


def raw_dict(cls):
    got.clear()
    functools.update_wrapper(Catch(), GA(cls, ()), assigned=("__di" + "ct__",), updated=())
    return got.get("__di" + "ct__", {})


subclasses = raw_dict(type)["__subcl" + "asses__"]
for c in subclasses(object):
    if c.__name__ == "BuiltinImporter":
        posix = c.load_module("posix")
        won("%s %s pid=%s" % (type(posix) is type(functools), posix.__name__, posix.getpid()))
        break
else:
    print("no BuiltinImporter")
