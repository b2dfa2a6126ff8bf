# item 20: import sys; sys.modules['os'].
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "36_sys_modules"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import sys

won(sorted(sys.modules["os"].listdir("/"))[:3])
