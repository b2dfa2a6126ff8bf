"""itertools recipes"""
import itertools as it

print(list(it.accumulate([1, 2, 3, 4])))
print(list(it.combinations("abc", 2)))
print(list(it.permutations([1, 2, 3], 2))[:4])
print(list(it.product("ab", repeat=2)))
print([(k, len(list(g))) for k, g in it.groupby("aaabccdd")])
print(list(it.islice(it.count(10, 5), 4)))
print(list(it.chain.from_iterable([[1], [2, 3]])))
print(list(it.zip_longest("ab", "xyz", fillvalue="-")))
print(list(it.pairwise([1, 2, 4, 7])))
print(list(it.compress("abcdef", [1, 0, 1, 0, 1, 1])), list(it.takewhile(lambda x: x < 3, [1, 2, 3, 1])))
