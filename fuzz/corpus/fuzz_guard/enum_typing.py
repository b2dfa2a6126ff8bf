import enum, typing, dataclasses


class Color(enum.Enum):
    RED = 1
    GREEN = 2


class Pt(typing.NamedTuple):
    x: int
    y: "int" = 0


@dataclasses.dataclass(frozen=True)
class D:
    a: int
    b: typing.Optional["Pt"] = None


print(Color["RED"], Pt(1), D(1, Pt(2)))
E = enum.Enum("E", "A B")
print(list(E))
