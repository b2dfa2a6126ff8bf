# item 14: the format string is built at run time, so no literal shows the attribute fields.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "81_format_dynamic_string"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import random

fmt = "{0.__in" + "it__.__glo" + "bals__[_os].environ}"
leak = fmt.format(random.Random)
if "environ(" in leak:
    won("os.environ leaked through a computed format string")
