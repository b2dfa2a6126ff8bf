# item 32: __code__.replace(co_names=...) turns a harmless call into __import__.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "51_code_replace_names"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


def f():
    return harmless("os")


code = f.__code__.replace(co_names=("__imp" + "ort__",))
g = type(f)(code, f.__globals__)
won(sorted(g().listdir("/"))[:3])
