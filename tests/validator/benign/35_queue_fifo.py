"""queue.Queue and PriorityQueue used as data structures (single thread)"""
import queue

q = queue.Queue()
for i in range(3):
    q.put(i)
print([q.get() for _ in range(q.qsize())], q.empty())
pq = queue.PriorityQueue()
for item in [(2, "b"), (1, "a"), (3, "c")]:
    pq.put(item)
print([pq.get()[1] for _ in range(3)])
lifo = queue.LifoQueue()
for c in "xyz":
    lifo.put(c)
print("".join(lifo.get() for _ in range(3)))
