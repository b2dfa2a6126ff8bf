# code.InteractiveInterpreter().runsource runs arbitrary source.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "64_code_interpreter"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import code

interp = code.InteractiveInterpreter({"won": won})
interp.runsource("import os; won(sorted(os.listdir('/'))[:3])")
