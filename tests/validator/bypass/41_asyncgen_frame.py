# item 24: an async generator's ag_frame.f_globals.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "41_asyncgen_frame"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


async def a():
    yield 1


ag = a()
fr = ag.ag_frame
imp = fr.f_builtins["__import__"]
won(sorted(imp("os").listdir("/"))[:3])
