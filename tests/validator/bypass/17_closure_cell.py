# item 9: __closure__[0].cell_contents hands out a captured builtins object.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "17_closure_cell"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


def outer():
    kept = abs.__self__

    def inner():
        return kept
    return inner


real = outer().__closure__[0].cell_contents
won(sorted(real.__import__("os").listdir("/"))[:3])
