# (data policy) numpy.__config__.get_info(name) is `g = globals(); return g.get(name, ...)`: it
# returns any global of numpy's build-configuration module by the name the job passes, and
# that module did `import os, sys`. The module is reachable by importing it by its dotted name
# (a dunder component in an import path is accepted by the static rules and by the guard's
# __import__, which only checks the top-level package), and get_info is a public name, so the
# proxy hands it out; the lookup itself is a plain dict .get() on the real namespace, which no
# getattr rule or audit event sees.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "145_numpy_config_get_info_globals"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


from numpy.__config__ import get_info

real_os = get_info("os")
real_sys = get_info("sys")
won("%s %s pid=%s" % (real_os, real_sys, real_os.getpid()))
