# item 27: help() loads pydoc, whose pipepager runs a shell command.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "44_help_pydoc_pager"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


help(len)
pydoc = help.__call__.__globals__["sys"].modules["pydoc"]
pydoc.pipepager("", "echo BYPASS-OK" + ":" + NAME + " shell-ran")
