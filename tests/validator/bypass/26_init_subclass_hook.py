# item 15: __init_subclass__ runs when a subclass is defined, no visible call.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "26_init_subclass_hook"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


class Base:
    def __init_subclass__(cls):
        imp = getattr(abs.__self__, "__imp" + "ort__")
        won(sorted(imp("os").listdir("/"))[:3])


class Child(Base):
    pass
