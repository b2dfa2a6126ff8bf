# (data policy) Like 117, through a private module attribute the proxies leave out:
# random._os is the real os module.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "118_numpy_pickle_private_name"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import numpy

with open("data.pkl", "wb") as f:
    f.write(b"crandom\n_os\n.")
os = numpy.load("data.pkl", allow_pickle=True)
won(os.getpid())
