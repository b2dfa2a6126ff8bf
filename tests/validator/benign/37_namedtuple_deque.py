"""collections.namedtuple, deque, OrderedDict, ChainMap"""
from collections import ChainMap, OrderedDict, deque, namedtuple

Point = namedtuple("Point", "x y")
p = Point(1, 2)
print(p, p._replace(x=5), p._asdict(), p.x + p.y)
d = deque(range(5), maxlen=4)
d.appendleft(-1)
d.rotate(1)
print(d)
od = OrderedDict.fromkeys("abc")
od.move_to_end("a")
print(list(od))
cm = ChainMap({"a": 1}, {"a": 2, "b": 3})
print(cm["a"], cm["b"], len(cm))
