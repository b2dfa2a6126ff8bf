# (data policy) numpy.info(obj, toplevel=name) and numpy.lookfor(what, module=name) import any
# module by name with the real __import__ (numpy's own frame, which the import finder lets
# through: its import-time code runs) and walk its namespace with the real getattr; here the
# real posix module's system() is found and its documentation printed. Found by a red-team
# review. Prints the marker only if the forbidden operation succeeded. Run ONLY through
# `codeq run`.
NAME = "167_numpy_info_imports_by_name"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import io
import numpy as np

buf = io.StringIO()
np.info("system", toplevel="posix", output=buf)
if "Found in posix" in buf.getvalue():
    won(buf.getvalue()[:80])
