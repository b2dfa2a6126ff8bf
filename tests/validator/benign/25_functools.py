"""functools: lru_cache, reduce, partial, wraps, cached_property"""
from functools import cached_property, lru_cache, partial, reduce, wraps


@lru_cache(maxsize=None)
def ways(n: int) -> int:
    return 1 if n <= 1 else ways(n - 1) + ways(n - 2)


def logged(fn):
    @wraps(fn)
    def inner(*args):
        print("call", fn.__name__, args)
        return fn(*args)
    return inner


@logged
def add(a, b):
    return a + b


class Circle:
    def __init__(self, r):
        self.r = r

    @cached_property
    def area(self):
        print("computing")
        return 3.14159 * self.r ** 2


print(ways(50), ways.cache_info().hits > 0)
print(reduce(lambda a, b: a * b, range(1, 6)), partial(int, base=2)("1011"))
print(add(2, 3), add.__name__)
c = Circle(2)
print(c.area, c.area)
