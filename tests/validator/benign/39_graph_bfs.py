"""graph search: BFS shortest path, DFS, topological sort"""
from collections import deque

graph = {"a": ["b", "c"], "b": ["d"], "c": ["d", "e"], "d": ["f"], "e": ["f"], "f": []}


def bfs(start, goal):
    prev = {start: None}
    q = deque([start])
    while q:
        node = q.popleft()
        if node == goal:
            path = []
            while node:
                path.append(node)
                node = prev[node]
            return path[::-1]
        for nxt in graph[node]:
            if nxt not in prev:
                prev[nxt] = node
                q.append(nxt)
    return None


def topo():
    indeg = {n: 0 for n in graph}
    for outs in graph.values():
        for n in outs:
            indeg[n] += 1
    ready = sorted(n for n, d in indeg.items() if d == 0)
    order = []
    while ready:
        n = ready.pop(0)
        order.append(n)
        for m in graph[n]:
            indeg[m] -= 1
            if indeg[m] == 0:
                ready.append(m)
    return order


print(bfs("a", "f"), topo())
