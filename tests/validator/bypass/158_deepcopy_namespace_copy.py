# harden_copy (fix for 146/153) judges a reducer's arguments when the reducer is called: no real
# module, no dict that IS a module's namespace. But copy.deepcopy deep-copies the arguments
# first, and a deep copy of a module namespace is a fresh plain dict holding the same atomic
# values (builtin functions, classes and functions are copied as themselves). typing's
# _GenericAlias.__reduce__ still looks its origin up in typing's globals() by the job-settable
# _name: "__builtins__" gives the real builtins dict, deepcopy turns it into a plain copy that
# passes plain_namespace(), and operator.getitem(copy, "__import__") is the real __import__.
# Found by a sixth red-team review (strict policy). Closed twice: typing's alias reduce takes
# only a name typing exports, and the reduce value is judged before it is deep-copied.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "158_deepcopy_namespace_copy"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import copy
import typing

alias = typing.Literal["__imp" + "ort__"]
alias._name = "__buil" + "tins__"
real_import = copy.deepcopy(alias)  # getitem(deepcopy(typing's __builtins__), "__import__")
posix = real_import("posix")
real_sys = real_import("sys")
won("import=%r posix.getpid()=%s os_in_real_sys_modules=%s" % (
    real_import, posix.getpid(), "os" in real_sys.modules))
