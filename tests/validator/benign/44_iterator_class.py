"""a class implementing the iterator protocol"""
class Countdown:
    def __init__(self, start):
        self.current = start

    def __iter__(self):
        return self

    def __next__(self):
        if self.current <= 0:
            raise StopIteration
        self.current -= 1
        return self.current + 1


class Range2D:
    def __init__(self, w, h):
        self.w, self.h = w, h

    def __iter__(self):
        for y in range(self.h):
            for x in range(self.w):
                yield x, y

    def __len__(self):
        return self.w * self.h


print(list(Countdown(5)))
print(list(Range2D(2, 2)), len(Range2D(3, 4)))
it = iter(Countdown(2))
print(next(it), next(it), next(it, "done"))
