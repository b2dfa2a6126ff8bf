# Variant of 02 that keeps the proxy's __name__ intact, so a fix that only freezes __name__ does
# not close the class. A proxy defers an allowed package's submodules (json.decoder) to its
# module-level __getattr__, which the job may replace: one that raises AttributeError makes
# `from json import decoder` fall back to sys.modules["json.decoder"] (IMPORT_FROM's fallback),
# the REAL module instead of its proxy. Its attributes are real modules too (re, then enum),
# and enum's globals hold the real sys: plain attribute reads on a local, which the static rules
# cannot tie to a module and the guard never sees.
# Found by a fifth red-team review (strict policy).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "154_import_from_fallback_getattr_hook"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import json


def refuse(key):
    raise AttributeError(key)


json.__getattr__ = refuse  # the proxy's lazy submodule hook, replaced
from json import decoder  # noqa: E402  -> the real json.decoder module

real_sys = decoder.re.enum.sys
real_os = real_sys.modules["os"]
won("decoder=%r os.getpid()=%s" % (decoder.__file__, real_os.getpid()))
