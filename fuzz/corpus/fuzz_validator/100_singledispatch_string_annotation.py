# functools.singledispatch evaluates a string annotation (typing.get_type_hints) that the static
# rules never parsed.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "100_singledispatch_string_annotation"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import functools


@functools.singledispatch
def show(x):
    return x


def handler(x: "won(sorted([c for c in ().__class__.__base__.__subclasses__() if c.__name__ == "
            "'_wrap_close'][0].__init__.__globals__['listdir']('/'))[:3]) or int"):
    return x


show.register(handler)
