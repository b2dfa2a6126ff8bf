# item 13: the import hides in a nested format spec of an f-string.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "22_fstring_nested_spec"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


box = []
s = f"{1:{box.append(__import__('os')) or 'd'}}"
won(sorted(box[0].listdir("/"))[:3])
