# item 1: module name from chr() codes.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "03_import_chr"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


m = __import__(chr(111) + chr(115))
won(sorted(m.listdir("/"))[:3])
