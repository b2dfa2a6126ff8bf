# a raw file object by type(): writes a file and reads it back under files: none.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "93_fileio_write_reopen"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import sys

file_io = type(sys.stdout.buffer.raw)
buffered = type(sys.stdout.buffer)
text = type(sys.stdout)
with text(buffered(file_io("written.txt", "w"))) as f:
    f.write("kept")
with file_io("written.txt") as f:
    if f.read() == b"kept":
        won("wrote and read back written.txt")
