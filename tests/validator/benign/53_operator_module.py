"""operator module as functions"""
import operator
from functools import reduce

print(reduce(operator.mul, [1, 2, 3, 4]), operator.add("a", "b"))
print(list(map(operator.neg, [1, -2, 3])))
getter = operator.itemgetter("b", "a")
print(getter({"a": 1, "b": 2}))
print(sorted([(1, "b"), (1, "a"), (0, "z")], key=operator.itemgetter(0, 1)))
inc = operator.methodcaller("upper")
print(inc("shout"), operator.contains([1, 2], 2), operator.truth(0))
