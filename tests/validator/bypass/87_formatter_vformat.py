# item 14/38: string.Formatter().vformat traverses attributes in pure Python.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "87_formatter_vformat"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import random
import string

leak = string.Formatter().vformat("{0.__init__.__globals__[_os].environ}", (random.Random,), {})
if "environ(" in leak:
    won("os.environ leaked through string.Formatter")
