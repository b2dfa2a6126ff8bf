# item 6: __builtins__.__dict__['exec'] running an import.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "12_builtins_dict_exec"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


b = __builtins__
d = b if isinstance(b, dict) else b.__dict__
d["exec"]("import os\nwon(sorted(os.listdir('/'))[:3])")
