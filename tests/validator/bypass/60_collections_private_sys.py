# module private attribute: collections._sys.modules['os'].
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "60_collections_private_sys"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import collections

won(sorted(collections._sys.modules["os"].listdir("/"))[:3])
