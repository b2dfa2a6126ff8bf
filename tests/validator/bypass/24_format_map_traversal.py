# item 14: str.format_map attribute traversal.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "24_format_map_traversal"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import random

leak = "{r.seed.__globals__[_os].environ}".format_map({"r": random.Random})
if "environ(" in leak:
    won("os.environ leaked through format_map")
