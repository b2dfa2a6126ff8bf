# attribute names hidden in a match class pattern: case object(__init__=object(__globals__=g)).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "83_match_class_pattern_attrs"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import random

match random.Random:
    case object(__init__=object(__globals__=g)):
        won(sorted(g["_o" + "s"].listdir("/"))[:3])
