# item 14: str.format attribute traversal from an allowed module's class to os.environ.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "23_str_format_traversal"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import random

leak = "{0.__init__.__globals__[_os].environ}".format(random.Random)
if "environ(" in leak:
    won("os.environ leaked through str.format")
