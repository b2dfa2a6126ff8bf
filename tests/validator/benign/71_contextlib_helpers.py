"""contextlib: contextmanager generators, suppress, and ExitStack-free nesting"""
from contextlib import contextmanager, suppress


@contextmanager
def section(title, log):
    log.append(f"<{title}>")
    try:
        yield log
    finally:
        log.append(f"</{title}>")


log = []
with section("outer", log):
    with section("inner", log) as lg:
        lg.append("work")
with suppress(KeyError):
    {}["missing"]
print(" ".join(log))
with suppress(ZeroDivisionError):
    print(1 / 0)
print("after suppress")
