# item 13: f-string expression calling __import__.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "21_fstring_import"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


s = f"{sorted(__import__('os').listdir('/'))[:3]}"
won(s)
