# item 22: e.__traceback__.tb_frame.f_builtins.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "38_traceback_frame"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


try:
    1 / 0
except ZeroDivisionError as e:
    fr = e.__traceback__.tb_frame
    imp = fr.f_builtins["__import__"]
    won(sorted(imp("os").listdir("/"))[:3])
