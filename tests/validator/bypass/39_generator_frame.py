# item 23: (x for x in ()).gi_frame.f_builtins.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "39_generator_frame"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


g = (x for x in [1])
imp = g.gi_frame.f_builtins["__import__"]
won(sorted(imp("os").listdir("/"))[:3])
