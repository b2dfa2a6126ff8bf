"""an LRU cache class built on OrderedDict"""
from collections import OrderedDict


class LRU:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.data: "OrderedDict[str, int]" = OrderedDict()

    def get(self, key: str) -> int:
        if key not in self.data:
            return -1
        self.data.move_to_end(key)
        return self.data[key]

    def put(self, key: str, value: int) -> None:
        self.data[key] = value
        self.data.move_to_end(key)
        if len(self.data) > self.capacity:
            self.data.popitem(last=False)

    def __repr__(self) -> str:
        return f"LRU({list(self.data.items())})"


c = LRU(2)
c.put("a", 1)
c.put("b", 2)
print(c.get("a"))
c.put("c", 3)
print(c.get("b"), c)
