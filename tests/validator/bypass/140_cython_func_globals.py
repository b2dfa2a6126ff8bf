# (data policy) Cython functions (cython_function_or_method, numpy.random's .pyx modules) carry
# the CPython 2 spellings of function internals as plain attributes: func_globals (the module's
# real namespace), func_code, func_closure, func_defaults. They are no dunder and not in the
# introspection list, so neither the static rules, the guard's getattr, nor the audit hook
# (Cython's getters raise no object.__getattr__ event) stop them. The methods of
# numpy.random.bit_generator's ISeedSequence are reachable from the public proxy; their
# func_globals is the real numpy.random.bit_generator namespace, holding the real sys.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "140_cython_func_globals"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import numpy as np

namespace = np.random.bit_generator.ISeedSequence.generate_state.func_globals
real_sys = namespace["sys"]
real_os = real_sys.modules["os"]
won("%s pid=%s" % (type(namespace["__builtins__"]).__name__, real_os.getpid()))
