# item 15: a class built with type() whose __del__ runs the forbidden call implicitly.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "25_type3_del_hook"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


T = type("T", (), {"__del__": lambda self: won(sorted(vars(abs.__self__)["__imp" + "ort__"]("os").listdir("/"))[:3])})
t = T()
del t
