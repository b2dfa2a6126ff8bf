"""datetime.strptime (the C module imports _strptime lazily)"""
from datetime import datetime

stamps = ["2024-02-29 23:59", "2023-12-01 00:00", "2024-01-15 12:30"]
parsed = sorted(datetime.strptime(s, "%Y-%m-%d %H:%M") for s in stamps)
for p in parsed:
    print(p.strftime("%A %d %B %Y, %H:%M"))
print((parsed[-1] - parsed[0]).total_seconds())
