"""dataclass with __post_init__, validation, and a computed field"""
from dataclasses import dataclass, field
from typing import List


@dataclass
class Order:
    id: int
    lines: List[tuple] = field(default_factory=list)
    total: float = field(init=False, default=0.0)

    def __post_init__(self):
        if self.id <= 0:
            raise ValueError("id must be positive")
        self.total = round(sum(q * p for _, q, p in self.lines), 2)


o = Order(7, [("pen", 3, 1.2), ("pad", 1, 4.5)])
print(o)
try:
    Order(0)
except ValueError as e:
    print(type(e).__name__, e)
