# codeop compiles source; FunctionType runs it without naming exec.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "65_codeop_function"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import codeop

c = codeop.compile_command("import os; won(sorted(os.listdir('/'))[:3])")
type(won)(c, globals())()
