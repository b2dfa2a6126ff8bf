# (data policy) numpy.add_newdoc(place, obj, doc) imports any module by name with the real
# __import__ and reads obj with the real getattr: a missing name's AttributeError carries the
# real module as .obj (like 112). Found by a red-team review of the find_class rule.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "122_numpy_add_newdoc_error_obj"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import numpy

try:
    numpy.add_newdoc("o" + "s", "no_such_name", "doc")
except AttributeError as e:
    won(e.obj.getpid())
