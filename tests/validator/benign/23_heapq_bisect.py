"""heapq priority queue and bisect"""
import bisect
import heapq

tasks = [(5, "low"), (1, "urgent"), (3, "normal"), (2, "high")]
heap = []
for t in tasks:
    heapq.heappush(heap, t)
print([heapq.heappop(heap)[1] for _ in range(len(heap))])
print(heapq.nlargest(2, [4, 1, 7, 3, 9]), heapq.nsmallest(2, [4, 1, 7, 3, 9]))
grades = [60, 70, 80, 90]
print([("FDCBA")[bisect.bisect(grades, s)] for s in [33, 99, 77, 70, 89, 90]])
xs = [1, 3, 5]
bisect.insort(xs, 4)
print(xs, bisect.bisect_left(xs, 4))
