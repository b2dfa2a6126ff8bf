"""dataclasses with defaults, field(default_factory), ordering, frozen"""
from dataclasses import asdict, dataclass, field, replace


@dataclass(order=True)
class Task:
    priority: int
    name: str = field(compare=False)
    tags: list = field(default_factory=list, compare=False)


@dataclass(frozen=True)
class Point:
    x: int
    y: int = 0


tasks = [Task(3, "write"), Task(1, "plan", ["urgent"]), Task(2, "test")]
print(sorted(tasks))
print(asdict(tasks[1]))
p = Point(1)
print(p, replace(p, y=5), p == Point(1, 0))
try:
    p.x = 3
except Exception as e:
    print("error:", type(e).__name__)
