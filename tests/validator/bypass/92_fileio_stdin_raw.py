# type(sys.stdin.buffer.raw) is io.FileIO: reads a file although strict says files: none.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "92_fileio_stdin_raw"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import sys

file_io = type(sys.stdin.buffer.raw)
with file_io("/etc/passwd") as f:
    won(f.read(20))
