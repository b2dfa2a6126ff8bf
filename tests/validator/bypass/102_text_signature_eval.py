# dataclasses documents a class with inspect.signature, which evals the names of a
# __text_signature__ (random._os.sep here) in another module's globals.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "102_text_signature_eval"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import dataclasses
import random  # noqa: F401 (its globals are where the names are looked up)


class Probe:
    """Probe(a=_os.sep)
--

"""

    __module__ = "random"


Probe.__doc__ = None  # the signature stays in the type's C-level doc; dataclass sees no doc
Probe = dataclasses.dataclass(init=False)(Probe)
if "'/'" in (Probe.__doc__ or ""):
    won(Probe.__doc__)
