# gc.get_objects() finds the os module among live objects.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "62_gc_get_objects"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import gc

for o in gc.get_objects():
    if type(o).__name__ == "module" and getattr(o, "__name__", "") == "os":
        won(sorted(o.listdir("/"))[:3])
        break
else:
    for o in gc.get_referrers(print):
        if isinstance(o, dict) and "__import__" in o:
            won(sorted(o["__import__"]("os").listdir("/"))[:3])
            break
