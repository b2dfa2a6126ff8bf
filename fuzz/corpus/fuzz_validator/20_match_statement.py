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
