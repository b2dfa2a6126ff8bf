# A proxy module's dunders are written with object.__setattr__/__delattr__ (harmless dunders):
# the hackcheck lets object's slot run on a GuardedModule (its first C base, module, uses the
# generic setattr), so GuardedModule.__setattr__/__delattr__ never see it, and module writes
# raise no audit event. `import json.decoder as m` runs IMPORT_FROM "decoder" on the json
# proxy; with the proxy's lazy __getattr__ deleted, the name is missing and the guard's
# absent_name() decides between ImportError (a loaded module's name: no fallback) and
# AttributeError by `f"{module.__name__}.{key}" in sys.modules`. The f-string FORMATS the name:
# a str subclass's __format__ answers "codeq-nothing.decoder", so absent_name raises
# AttributeError, and CPython's IMPORT_FROM fallback then builds "%U.%U" from the SAME object's
# real characters: sys.modules["json.decoder"], the real module. Its attributes are real too:
# json.decoder.re.enum.sys is the real sys. Class: the guard judges a job-controlled str by
# one protocol (format) while CPython uses its raw characters (a str subclass again, 147/152's
# class, in the one place plain_name() is not applied: a proxy's own __name__).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "160_proxy_name_str_subclass_import_from"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import json


class Name(str):
    def __format__(self, spec):
        return "codeq-nothing"


object.__setattr__(json, "__na" + "me__", Name("json"))
object.__delattr__(json, "__get" + "attr__")  # the proxy's lazy hook: it would proxy "decoder"
import json.decoder as real_decoder


def reach(mod):
    return mod.re.enum.sys


real_sys = reach(real_decoder)
real_os = real_sys.modules["os"]
won("decoder=%r os.getpid()=%s has_system=%s" % (
    real_decoder, real_os.getpid(), callable(real_os.system)))
