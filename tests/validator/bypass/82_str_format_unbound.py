# item 14: str.format called unbound, the template is an argument not the receiver.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "82_str_format_unbound"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import random

leak = str.format("{0.__init__.__globals__[_os].environ}", random.Random)
if "environ(" in leak:
    won("os.environ leaked through str.format(template, obj)")
