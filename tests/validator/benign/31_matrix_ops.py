"""pure-Python matrix multiply, transpose, determinant"""
def matmul(a, b):
    return [[sum(x * y for x, y in zip(row, col)) for col in zip(*b)] for row in a]


def det(m):
    if len(m) == 1:
        return m[0][0]
    return sum((-1) ** j * m[0][j] * det([r[:j] + r[j + 1:] for r in m[1:]]) for j in range(len(m)))


a = [[1, 2], [3, 4]]
b = [[0, 1], [1, 0]]
print(matmul(a, b))
print(det([[2, 0, 1], [1, 3, 2], [1, 1, 1]]))
ident = [[int(i == j) for j in range(3)] for i in range(3)]
print(ident)
