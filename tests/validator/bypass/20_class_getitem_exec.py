# item 12: exec installed as __class_getitem__, called by a subscript.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "20_class_getitem_exec"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


class _:
    pass


[None for _.__class_getitem__ in [exec]]
_["import os\nwon(sorted(os.listdir('/'))[:3])"]
