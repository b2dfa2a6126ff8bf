# control: subprocess.run(['id']).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "76_subprocess_run"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import subprocess

p = subprocess.run(["id"], capture_output=True, text=True)
if "uid=" in p.stdout:
    won("ran id")
