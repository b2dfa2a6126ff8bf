# (data policy) numpy.ma.MaskedArray._update_from(obj) copies `getattr(obj, '__dict__', {})` of
# ANY object that is not a MaskedArray into a fresh plain dict, `_optinfo`, and keeps that dict
# as a plain instance attribute (`m._optinfo`, `m._basedict`). Given a class (here `object`),
# `__dict__` is the class's mappingproxy, so the job receives a plain dict holding the class's
# RAW entries: `object.__getattribute__` (a slot wrapper) as a value, i.e. an attribute read by
# a name built at run time, with no getattr rule in the way. `_update_from` is a method of an
# instance (a private name on an instance, which the static rules allow) and the job never
# spells `__dict__`. Same class as 107/111/136 (a library copies a class's `__dict__` into
# something plain), found in a library the update_wrapper/__getstate__ fixes do not cover. A
# function's `__globals__` raises no audit event: numpy.lib.utils' real namespace, its sys, os.
# Found by a seventh red-team review (data policy).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "162_ma_update_from_class_dict"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import numpy as np

m = np.ma.masked_array([1.0, 2.0])
m._update_from(object)           # _optinfo.update(object.__dict__): a plain copy
raw = m._optinfo
read = raw["__getattr" + "ibute__"]  # object.__getattribute__, a value
namespace = read(np.who, "__glo" + "bals__")  # numpy/lib/utils.py's globals
real_sys = namespace["sys"]
won("%s os=%s modules=%d" % (real_sys, namespace["os"], len(real_sys.modules)))
