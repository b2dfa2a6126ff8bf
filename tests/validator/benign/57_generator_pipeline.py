"""lazy data pipeline with generators over stdin"""
def read_lines():
    while True:
        try:
            yield input()
        except EOFError:
            return


def parse(lines):
    for line in lines:
        if line and not line.startswith("#"):
            name, qty = line.split(":")
            yield name.strip(), int(qty)


def large(items, threshold):
    return ((n, q) for n, q in items if q >= threshold)


for name, qty in large(parse(read_lines()), 5):
    print(f"{name}={qty}")
