# metaclass __prepare__ namespace resolves a hidden name to __import__ in a class body.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "68_metaclass_prepare_namespace"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


class NS(dict):
    def __missing__(self, key):
        if key == "IMPORTER":
            return vars(type(self).__mro__[-1].__subclasses__ and abs.__self__)["__imp" + "ort__"]
        raise KeyError(key)


class Meta(type):
    @classmethod
    def __prepare__(mcs, name, bases):
        return NS()


class K(metaclass=Meta):
    mod = IMPORTER("os")  # noqa: F821


won(sorted(K.mod.listdir("/"))[:3])
