# (data policy) Like 117, through a public attribute that is a module outside the allowlist
# (numpy.lib.npyio.os); a proxy drops such attributes, a pickle's lookup did not.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "119_numpy_pickle_module_attr"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import numpy

with open("data.pkl", "wb") as f:
    f.write(b"cnumpy.lib.npyio\nos\n.")
os = numpy.load("data.pkl", allow_pickle=True)
won(os.getpid())
