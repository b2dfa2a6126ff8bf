"""generators, yield from, send"""
def fib():
    a, b = 0, 1
    while True:
        yield a
        a, b = b, a + b


def take(n, it):
    for _, x in zip(range(n), it):
        yield x


def chain(*its):
    for it in its:
        yield from it


def averager():
    total, count, avg = 0.0, 0, None
    while True:
        x = yield avg
        total += x
        count += 1
        avg = total / count


print(list(take(10, fib())))
print(list(chain("ab", [1, 2], range(2))))
g = averager()
next(g)
print([g.send(x) for x in (10, 20, 30)])
