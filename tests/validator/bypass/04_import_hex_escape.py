# item 1: module name as a hex-escaped literal '\x6f\x73' ("os").
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "04_import_hex_escape"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


m = __import__("\x6f\x73")
won(sorted(m.listdir("/"))[:3])
