"""global/nonlocal scoping and default-argument idioms"""
total = 0


def add_to_total(x):
    global total
    total += x
    return total


def make_multipliers():
    return [lambda x, k=k: x * k for k in range(1, 4)]


def outer():
    msgs = []

    def log(m):
        msgs.append(m)

    for i in range(3):
        log(f"step {i}")
    return msgs


print(add_to_total(5), add_to_total(7), total)
print([m(10) for m in make_multipliers()])
print(outer())
