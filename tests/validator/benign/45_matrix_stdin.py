"""parse a grid from stdin and flood-fill islands"""
grid = []
while True:
    try:
        row = input().strip()
    except EOFError:
        break
    if row:
        grid.append(list(row))
h, w = len(grid), len(grid[0])
seen = set()


def fill(r, c):
    stack = [(r, c)]
    size = 0
    while stack:
        r, c = stack.pop()
        if (r, c) in seen or not (0 <= r < h and 0 <= c < w) or grid[r][c] != "#":
            continue
        seen.add((r, c))
        size += 1
        stack.extend([(r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)])
    return size


sizes = sorted((fill(r, c) for r in range(h) for c in range(w) if grid[r][c] == "#" and (r, c) not in seen), reverse=True)
print("islands:", len(sizes), "sizes:", sizes)
