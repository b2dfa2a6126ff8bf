"""custom exception hierarchy, raise from, type(e).__name__ in messages"""
class AppError(Exception):
    pass


class NotFound(AppError):
    def __init__(self, key):
        super().__init__(f"missing key {key!r}")
        self.key = key


def lookup(d, key):
    try:
        return d[key]
    except KeyError as e:
        raise NotFound(key) from e


for k in ["a", "z"]:
    try:
        print(lookup({"a": 1}, k))
    except AppError as e:
        print(f"{type(e).__name__}: {e} (cause {type(e.__cause__).__name__})")
try:
    int("x")
except (ValueError, TypeError) as e:
    print("caught", type(e).__name__, e.args)
finally:
    print("finally ran")
