# star import from a denied module.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "74_from_os_import_star"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


from os import *  # noqa: F401,F403

won(sorted(listdir("/"))[:3])  # noqa: F405
