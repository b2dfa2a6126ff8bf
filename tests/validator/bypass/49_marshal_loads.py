# item 30/32: marshal.loads of a compiled code object, then exec.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "49_marshal_loads"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import marshal

blob = marshal.dumps(compile("import os\nR = sorted(os.listdir('/'))[:3]", "x", "exec"))
g = {}
exec(marshal.loads(blob), g)
won(g["R"])
