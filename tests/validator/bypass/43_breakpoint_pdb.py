# item 26: breakpoint() -> pdb reads commands from stdin and imports os.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "43_breakpoint_pdb"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


breakpoint()
x = 1
