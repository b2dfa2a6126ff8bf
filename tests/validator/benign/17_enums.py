"""enum.Enum, IntEnum, Flag, auto"""
from enum import Enum, Flag, IntEnum, auto


class Color(Enum):
    RED = 1
    GREEN = 2
    BLUE = 3


class Level(IntEnum):
    LOW = 1
    HIGH = 5


class Perm(Flag):
    R = auto()
    W = auto()
    X = auto()


print(Color.RED, Color(2), Color["BLUE"].value, [c.name for c in Color])
print(Level.HIGH > Level.LOW, Level.HIGH + 1)
rw = Perm.R | Perm.W
print(Perm.R in rw, Perm.X in rw, rw.value)
