"""A 400-line agent-style program for the validator benchmark: seven benign-corpus programs and
agent100.py, concatenated (imports in the middle of a file are legal and common in agent output).
Regenerate by concatenating the same files with one blank line between them."""
"""a typical agent-style inventory manager"""
class Item:
    def __init__(self, sku, name, qty, price):
        self.sku, self.name, self.qty, self.price = sku, name, qty, price

    @property
    def value(self):
        return self.qty * self.price

    def __repr__(self):
        return f"Item({self.sku!r}, qty={self.qty})"


class Inventory:
    def __init__(self):
        self.items = {}

    def add(self, item):
        if item.sku in self.items:
            self.items[item.sku].qty += item.qty
        else:
            self.items[item.sku] = item

    def remove(self, sku, qty):
        item = self.items.get(sku)
        if item is None or item.qty < qty:
            raise ValueError(f"cannot remove {qty} of {sku}")
        item.qty -= qty

    def report(self):
        for sku in sorted(self.items):
            it = self.items[sku]
            print(f"{sku:6} {it.name:10} {it.qty:4d} {it.value:9.2f}")
        print(f"{'total':>21} {sum(i.value for i in self.items.values()):9.2f}")


inv = Inventory()
inv.add(Item("A1", "bolts", 100, 0.05))
inv.add(Item("B2", "nuts", 250, 0.02))
inv.add(Item("A1", "bolts", 20, 0.05))
try:
    inv.remove("B2", 1000)
except ValueError as e:
    print("error:", e)
inv.remove("B2", 50)
inv.report()

"""a binary search tree with recursion and in-order generator"""
class Node:
    def __init__(self, key):
        self.key = key
        self.left = self.right = None


class BST:
    def __init__(self):
        self.root = None
        self.size = 0

    def insert(self, key):
        self.root = self._insert(self.root, key)

    def _insert(self, node, key):
        if node is None:
            self.size += 1
            return Node(key)
        if key < node.key:
            node.left = self._insert(node.left, key)
        elif key > node.key:
            node.right = self._insert(node.right, key)
        return node

    def __iter__(self):
        def walk(n):
            if n:
                yield from walk(n.left)
                yield n.key
                yield from walk(n.right)
        return walk(self.root)

    def __len__(self):
        return self.size

    def __contains__(self, key):
        n = self.root
        while n:
            if key == n.key:
                return True
            n = n.left if key < n.key else n.right
        return False


t = BST()
for k in [50, 30, 70, 20, 40, 60, 80, 30]:
    t.insert(k)
print(list(t), len(t), 60 in t, 65 in t)

"""a tiny tokenizer and recursive-descent calculator"""
import re

TOKEN = re.compile(r"\s*(?:(\d+\.?\d*)|(.))")


def tokenize(s):
    for num, op in TOKEN.findall(s):
        yield ("num", float(num)) if num else ("op", op)


class Parser:
    def __init__(self, text):
        self.tokens = list(tokenize(text)) + [("end", None)]
        self.i = 0

    def peek(self):
        return self.tokens[self.i]

    def take(self):
        t = self.tokens[self.i]
        self.i += 1
        return t

    def expr(self):
        v = self.term()
        while self.peek() in (("op", "+"), ("op", "-")):
            v = v + self.term() if self.take()[1] == "+" else v - self.term()
        return v

    def term(self):
        v = self.factor()
        while self.peek() in (("op", "*"), ("op", "/")):
            v = v * self.factor() if self.take()[1] == "*" else v / self.factor()
        return v

    def factor(self):
        kind, val = self.take()
        if kind == "num":
            return val
        if val == "(":
            v = self.expr()
            self.take()
            return v
        if val == "-":
            return -self.factor()
        raise SyntaxError(f"unexpected {val!r}")


for e in ["1 + 2 * 3", "(1 + 2) * 3", "-4 / (2 - 4)", "2 * (3 + (4 - 1)) / 3"]:
    print(e, "=", Parser(e).expr())

"""graph search: BFS shortest path, DFS, topological sort"""
from collections import deque

graph = {"a": ["b", "c"], "b": ["d"], "c": ["d", "e"], "d": ["f"], "e": ["f"], "f": []}


def bfs(start, goal):
    prev = {start: None}
    q = deque([start])
    while q:
        node = q.popleft()
        if node == goal:
            path = []
            while node:
                path.append(node)
                node = prev[node]
            return path[::-1]
        for nxt in graph[node]:
            if nxt not in prev:
                prev[nxt] = node
                q.append(nxt)
    return None


def topo():
    indeg = {n: 0 for n in graph}
    for outs in graph.values():
        for n in outs:
            indeg[n] += 1
    ready = sorted(n for n, d in indeg.items() if d == 0)
    order = []
    while ready:
        n = ready.pop(0)
        order.append(n)
        for m in graph[n]:
            indeg[m] -= 1
            if indeg[m] == 0:
                ready.append(m)
    return order


print(bfs("a", "f"), topo())

"""a class with __init__, __repr__, __eq__, __add__, __mul__, __abs__, __hash__"""
import math


class Vector:
    def __init__(self, x: float, y: float) -> None:
        self.x = x
        self.y = y

    def __repr__(self) -> str:
        return f"Vector({self.x!r}, {self.y!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vector) and (self.x, self.y) == (other.x, other.y)

    def __hash__(self) -> int:
        return hash((self.x, self.y))

    def __add__(self, other: "Vector") -> "Vector":
        return Vector(self.x + other.x, self.y + other.y)

    def __mul__(self, k: float) -> "Vector":
        return Vector(self.x * k, self.y * k)

    __rmul__ = __mul__

    def __abs__(self) -> float:
        return math.hypot(self.x, self.y)

    def __bool__(self) -> bool:
        return bool(self.x or self.y)


v = Vector(3, 4)
print(v, abs(v), v + Vector(1, 1), 2 * v, v * 0.5)
print(v == Vector(3, 4), len({v, Vector(3, 4)}), bool(Vector(0, 0)))

"""structural pattern matching"""
def handle(cmd):
    match cmd:
        case {"op": "add", "args": [a, b]}:
            return a + b
        case {"op": "neg", "args": [a]}:
            return -a
        case [x, y, *rest]:
            return f"list starting {x},{y} (+{len(rest)})"
        case str() as s if s.isdigit():
            return int(s)
        case Point(x=0, y=0):
            return "origin"
        case Point(x=x, y=y):
            return f"point {x},{y}"
        case _:
            return "unknown"


class Point:
    __match_args__ = ("x", "y")

    def __init__(self, x, y):
        self.x, self.y = x, y


for c in [{"op": "add", "args": [2, 3]}, {"op": "neg", "args": [4]}, [1, 2, 3, 4], "42", Point(0, 0), Point(1, 2), 3.5]:
    print(handle(c))

"""typing annotations: Optional, Union, TypeVar, Generic, Protocol, Callable"""
from typing import Callable, Dict, Generic, Iterable, List, Optional, Protocol, TypeVar, Union

T = TypeVar("T")


class Stack(Generic[T]):
    def __init__(self) -> None:
        self._items: List[T] = []

    def push(self, item: T) -> None:
        self._items.append(item)

    def pop(self) -> Optional[T]:
        return self._items.pop() if self._items else None


class HasLen(Protocol):
    def __len__(self) -> int: ...


def total_len(xs: Iterable[HasLen]) -> int:
    return sum(len(x) for x in xs)


def apply(f: Callable[[int], int], xs: List[int]) -> Dict[int, int]:
    return {x: f(x) for x in xs}


def describe(v: Union[int, str]) -> str:
    return "int" if isinstance(v, int) else "str"


s: Stack[int] = Stack()
s.push(1)
s.push(2)
print(s.pop(), s.pop(), s.pop())
print(total_len(["ab", [1, 2, 3]]), apply(lambda x: x * x, [1, 2, 3]), describe("q"))

"""Sales report: the kind of program an agent writes for a data question (100 lines)."""
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Dict, Iterable, List, Optional
import json
import re
import statistics

RAW = """order_id,date,region,product,qty,unit_price
1001,2024-01-03,north,widget,4,2.50
1002,2024-01-03,south,gadget,1,12.00
1003,2024-01-04,north,gizmo,10,0.99
1004,2024-01-05,east,widget,7,2.50
1005,2024-01-06,south,widget,3,2.45
1006,2024-01-06,west,gadget,2,11.50"""


class ParseError(Exception):
    """Raised when a line of the input cannot be understood."""


@dataclass(order=True)
class Order:
    day: date
    order_id: int
    region: str = field(compare=False)
    product: str = field(compare=False)
    qty: int = field(compare=False, default=0)
    unit_price: float = field(compare=False, default=0.0)

    @property
    def total(self) -> float:
        return round(self.qty * self.unit_price, 2)


def parse(text: str) -> List[Order]:
    lines = text.strip().splitlines()
    header = lines[0].split(",")
    orders = []
    for n, line in enumerate(lines[1:], start=2):
        row = dict(zip(header, line.split(",")))
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", row.get("date", "")):
            raise ParseError(f"line {n}: bad date {row.get('date')!r}")
        y, m, d = (int(p) for p in row["date"].split("-"))
        orders.append(Order(date(y, m, d), int(row["order_id"]), row["region"],
                            row["product"], int(row["qty"]), float(row["unit_price"])))
    return sorted(orders)


def by_region(orders: Iterable[Order]) -> Dict[str, float]:
    totals: Dict[str, float] = defaultdict(float)
    for o in orders:
        totals[o.region] += o.total
    return {k: round(v, 2) for k, v in sorted(totals.items())}


def best_day(orders: List[Order]) -> Optional[date]:
    per_day = Counter()
    for o in orders:
        per_day[o.day] += o.total
    return max(per_day, key=lambda d: (per_day[d], d)) if per_day else None


def weekly(orders: List[Order], start: date) -> List[float]:
    weeks = [0.0] * 2
    for o in orders:
        idx = (o.day - start) // timedelta(days=7)
        if 0 <= idx < len(weeks):
            weeks[idx] += o.total
    return [round(w, 2) for w in weeks]


def summary(orders: List[Order]) -> dict:
    totals = [o.total for o in orders]
    return {
        "orders": len(orders),
        "revenue": round(sum(totals), 2),
        "mean": round(statistics.mean(totals), 2),
        "median": statistics.median(totals),
        "top_products": Counter(o.product for o in orders).most_common(2),
        "regions": by_region(orders),
        "best_day": str(best_day(orders)),
        "weekly": weekly(orders, date(2024, 1, 1)),
    }


def main() -> int:
    try:
        orders = parse(RAW)
    except ParseError as e:
        print(f"error: {type(e).__name__}: {e}")
        return 1
    report = summary(orders)
    print(json.dumps(report, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
