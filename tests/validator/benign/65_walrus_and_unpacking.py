"""walrus, star unpacking, chained comparisons, ternaries"""
data = [3, 8, 1, 9, 4]
if (n := len(data)) > 3:
    print(f"long list ({n})")
first, *middle, last = data
print(first, middle, last)
(a, b), c = (1, 2), 3
print(a, b, c, 0 < a < b < c)
chunks = []
it = iter(data)
while chunk := [x for _, x in zip(range(2), it)]:
    chunks.append(chunk)
print(chunks)
print(["even" if x % 2 == 0 else "odd" for x in data])
print(*data, sep=", ", end=".\n")
