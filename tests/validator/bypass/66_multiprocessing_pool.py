# multiprocessing runs a function in a forked child.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "66_multiprocessing_pool"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import multiprocessing

with multiprocessing.get_context("fork").Pool(1) as pool:
    r = pool.apply(len, ("abc",))
if r == 3:
    won("multiprocessing child ran")
