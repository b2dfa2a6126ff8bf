# __builtins__ and __import__ captured through default arguments.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "70_builtins_default_arg"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


def f(b=__builtins__, imp=__import__):
    return imp("os")


won(sorted(f().listdir("/"))[:3])
