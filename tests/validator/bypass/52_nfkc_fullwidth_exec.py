# item 33: fullwidth identifiers normalize (NFKC) to exec.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "52_nfkc_fullwidth_exec"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


ｅｘｅｃ("import os\nwon(sorted(os.listdir('/'))[:3])")
