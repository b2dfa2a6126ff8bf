# Regression guard: ordinary threading keeps working under the pids limit and seccomp.
# expect: status=ok
# expect: stdout-contains=sum=4950
import threading, queue
q = queue.Queue()
ts = [threading.Thread(target=lambda i=i: q.put(i)) for i in range(16)]
for t in ts:
    t.start()
for t in ts:
    t.join()
from concurrent.futures import ThreadPoolExecutor
with ThreadPoolExecutor(8) as ex:
    total = sum(ex.map(lambda x: x, range(100)))
if q.qsize() == 16:
    print(f"sum={total}")
