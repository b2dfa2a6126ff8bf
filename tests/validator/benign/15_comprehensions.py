"""list/dict/set comprehensions and generator expressions"""
matrix = [[r * 3 + c for c in range(3)] for r in range(3)]
print(matrix)
print([row[i] for i, row in enumerate(matrix)])
transposed = [list(col) for col in zip(*matrix)]
print(transposed)
squares = {n: n * n for n in range(6) if n % 2 == 0}
print(squares)
print(sorted({w[0] for w in "apple banana avocado cherry".split()}))
print(sum(x for x in range(100) if x % 7 == 0))
flat = [x for row in matrix for x in row if x > 3]
print(flat)
