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
