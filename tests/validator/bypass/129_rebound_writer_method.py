# The writer rule compared the frame's code with typing.NamedTupleMeta.__new__ looked up at
# the time of the write, and the job can rebind that attribute (type.__setattr__ and __new__
# are harmless dunders): its own function, with a local called nm_tpl, then passed for the
# library's and wrote any denied attribute. Found by a second red-team review.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "129_rebound_writer_method"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import typing


def w(nm_tpl, name, value):
    object.__setattr__(nm_tpl, name, value)


type.__setattr__(typing.NamedTupleMeta, "__n" + "ew__", w)


def f(x=1):
    return x


w(f, "__def" + "aults__", (2,))
if f() == 2:
    won(f())
