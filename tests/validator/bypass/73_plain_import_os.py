# control: the plain import the policy exists for.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "73_plain_import_os"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import os

won(sorted(os.listdir("/"))[:3])
