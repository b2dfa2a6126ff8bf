import collections, dataclasses, typing, functools, operator

N = collections.namedtuple("N", "a b")
C = dataclasses.make_dataclass("C", [("x", int), ("y", "typing.List[int]")])
print(N(1, 2), C(1, [2]))
T = typing.List["int"]
print(typing.get_args(T))
ag = operator.attrgetter("real.imag")
print(ag(3))
mc = operator.methodcaller("upper")
print(mc("a"))


@functools.singledispatch
def show(x):
    return "?"


@show.register
def _(x: "int"):
    return "int"


print(show(1))
