# dataclasses runs its generated methods in the globals of the class's __module__: a field name
# (from __annotations__) then reads that module's imports (sys.modules of dataclasses here).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "104_dataclass_module_globals"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import dataclasses


class Row:
    __module__ = "dataclasses"
    __annotations__ = {"x or sys.modules['po' + 'six'].getcwd()": int}


Row = dataclasses.dataclass(init=False, eq=False)(Row)
row = Row()
row.x = 0
text = repr(row)
if "/work" in text or "/tmp" in text:
    won(text)
