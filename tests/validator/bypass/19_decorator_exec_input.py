# item 11: @exec @input on a class: the decorators call input() then exec() on stdin.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "19_decorator_exec_input"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


@exec
@input
class Prompt:
    pass
