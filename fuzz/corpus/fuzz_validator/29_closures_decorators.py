"""closures and decorators defined by the program"""
def counter():
    count = 0

    def inc(step=1):
        nonlocal count
        count += step
        return count
    return inc


def retry(times):
    def deco(fn):
        def wrapper(*a, **kw):
            last = None
            for attempt in range(1, times + 1):
                try:
                    return fn(*a, attempt=attempt, **kw)
                except RuntimeError as e:
                    last = e
            raise last
        return wrapper
    return deco


@retry(3)
def flaky(attempt):
    if attempt < 3:
        raise RuntimeError(f"attempt {attempt}")
    return f"ok after {attempt}"


c = counter()
print(c(), c(), c(10))
print(flaky())
adders = [lambda x, n=n: x + n for n in range(3)]
print([f(10) for f in adders])
