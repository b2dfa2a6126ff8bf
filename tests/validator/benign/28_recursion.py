"""recursion: permutations, tree depth, memoised recursion with a dict"""
def perms(xs):
    if len(xs) <= 1:
        return [xs]
    return [[x] + p for i, x in enumerate(xs) for p in perms(xs[:i] + xs[i + 1:])]


def depth(tree):
    if not isinstance(tree, list):
        return 0
    return 1 + max((depth(t) for t in tree), default=0)


memo = {}


def partitions(n, k):
    if n == 0:
        return 1
    if n < 0 or k == 0:
        return 0
    if (n, k) not in memo:
        memo[n, k] = partitions(n - k, k) + partitions(n, k - 1)
    return memo[n, k]


print(perms([1, 2, 3]))
print(depth([1, [2, [3, [4]]], []]))
print(partitions(30, 30))
