# (data policy, guard alone: the static rules reject __import__ and the dunder) The guard's
# __import__ hands a fromlist to the real import and then to link(), which sets every loaded
# `package.name` it names on the package's proxy, before from_view() checks the names: a
# private submodule too. `__import__("numpy", fromlist=["__config__"])` is refused (the name is
# a denied dunder), but only after numpy's proxy got `__config__`, the proxy of numpy.__config__;
# `import numpy.__config__ as c` (IMPORT_FROM on the numpy proxy) then finds it, and its
# get_info(name) returns its globals: the real os and sys (145's module, reached by the link).
# Class: a private submodule made a proxy's attribute (145, 155).
# Found by an eighth red-team review (data policy, static rules off).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "164_fromlist_links_private_submodule"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


try:
    __import__("numpy", fromlist=["__config__"])
except AttributeError:
    pass
import numpy.__config__ as config

real_sys = config.get_info("sys")
won("%s pid=%s" % (real_sys, real_sys.modules["os"].getpid()))
