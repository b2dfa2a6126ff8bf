# The sys proxy is the guard's ForwardingModule: its __getattr__(key) forwards to the real sys
# when `key in names` (a frozenset of the listed attributes). The job calls that __getattr__ itself
# (type(sys).__getattr__, a harmless dunder) with a str subclass: frozenset membership uses the
# key's own __hash__/__eq__ (hash("argv"), then equal to anything), and the real getattr then
# looks the key up in the module dict by a second __hash__ call, which now answers the hash of
# "modules": the real sys.modules. check_attr() refuses str subclasses, but this path never calls
# it (same weakness as 01: a name judged by methods of a job-controlled object, here in the guard).
# Found by a fifth red-team review (strict policy).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "152_forwarding_module_str_subclass"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import sys

calls = [0]


class Name(str):
    def __hash__(self):
        calls[0] += 1
        return hash("argv") if calls[0] == 1 else str.__hash__(self)

    def __eq__(self, other):
        return True


modules = type(sys).__getattr__(sys, Name("modules"))  # the real sys.modules
posix = modules["posix"]
won("posix.getpid()=%s real_os=%s" % (posix.getpid(), modules["os"].system))
