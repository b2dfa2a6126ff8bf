# item 24: a coroutine's cr_frame.f_builtins.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "40_coroutine_frame"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


async def c():
    return 1


co = c()
imp = co.cr_frame.f_builtins["__import__"]
co.close()
won(sorted(imp("os").listdir("/"))[:3])
