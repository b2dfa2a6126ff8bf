# item 1: getattr(__builtins__, 'ev'+'al') builds a denied name from strings.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "01_getattr_builtins_concat"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


ev = getattr(__builtins__, "ev" + "al")
os_ = ev("__imp" + "ort__('o' + 's')")
won(sorted(os_.listdir("/"))[:3])
