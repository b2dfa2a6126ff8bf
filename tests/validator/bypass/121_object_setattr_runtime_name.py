# object.__setattr__(obj, name, value) writes by a name built at run time: __setattr__ is a
# harmless dunder (classes call it through super()), so neither the static rules nor the
# guard's setattr saw the name. Here a function's __defaults__; the same reaches __class__,
# __code__, __kwdefaults__ (listed as a residual in security-model.md until this was closed).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "121_object_setattr_runtime_name"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


def f(x=1):
    return x


object.__setattr__(f, "__def" + "aults__", (2,))
if f() == 2:
    won(f())
