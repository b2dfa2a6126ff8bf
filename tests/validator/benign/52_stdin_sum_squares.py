"""read all of stdin with an input() loop, print(end=...) and sep"""


def read_all() -> str:
    chunks = []
    while True:
        try:
            chunks.append(input())
        except EOFError:
            return "\n".join(chunks)


nums = [int(x) for x in read_all().split()]
print(sum(nums), end="\n")
print(*(n * n for n in nums), sep=" ")
print("count", len(nums), sep=": ")
