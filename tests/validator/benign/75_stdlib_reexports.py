"""Names allowed modules take from their C accelerators or from each other"""
import csv
import hashlib
import io
import operator
import queue
import statistics
from collections import OrderedDict

print(hashlib.blake2b(b"codeq", digest_size=8).hexdigest(), hashlib.blake2s(b"q").hexdigest()[:8])
print(hashlib.sha256(b"codeq").hexdigest()[:16], hashlib.md5(b"x").hexdigest()[:8])
print(statistics.mean([1, 2, 3, 4]), statistics.median([3, 1, 2]), statistics.fmean([1.5, 2.5]))
print(statistics.Fraction(3, 6), statistics.Decimal("1.10") + 1)
q = queue.SimpleQueue()
q.put(7)
print(q.get(), queue.Empty.__name__)
rows = list(csv.reader(io.StringIO("a,b\n1,2\n")))
print(rows, csv.QUOTE_MINIMAL, operator.itemgetter(1)(rows[1]))
print(OrderedDict(a=1, b=2).popitem())
