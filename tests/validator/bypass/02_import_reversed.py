# item 1: __import__('so'[::-1]).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "02_import_reversed"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


m = __import__("so"[::-1])
won(sorted(m.listdir("/"))[:3])
