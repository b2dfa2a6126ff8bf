# Writes from "module code being imported" were allowed, but import-time code reads objects the
# job can change: _strptime's module code (imported by the first datetime.strptime) indexes
# calendar.day_abbr, whose _days list the job replaced with a C-only writer. Found by a red-team
# review of 121's fix.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "126_import_time_reader"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import calendar
import datetime
import functools


def f(x=1):
    return x


calendar.day_abbr._days = [functools.partial(
    dict.fromkeys, map(object.__setattr__, [f], ["__def" + "aults__"], [(2,)]))] * 7
try:
    datetime.datetime.strptime("2020", "%Y")
except Exception:
    pass
if f() == 2:
    won(f())
