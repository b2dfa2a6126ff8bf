# item 29: compile() with a file name; the traceback machinery reads that file.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "47_compile_filename_leak"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


try:
    exec(compile("1 / 0", "/etc/passwd", "exec"))
except ZeroDivisionError:
    line = __import__("linecache").getline("/etc/passwd", 1)
    if line.startswith("root:"):
        won("read /etc/passwd through linecache")
