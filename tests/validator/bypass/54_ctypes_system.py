# item 34: ctypes.CDLL(None).system.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "54_ctypes_system"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import ctypes

libc = ctypes.CDLL(None)
if libc.system(b"true") == 0:
    won("libc system ran true")
