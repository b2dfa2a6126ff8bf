"""csv-like parsing of stdin and per-group totals"""
from collections import defaultdict

rows = []
header = input().split(",")
while True:
    try:
        line = input()
    except EOFError:
        break
    if not line.strip():
        continue
    rows.append(dict(zip(header, line.split(","))))

totals = defaultdict(float)
for r in rows:
    totals[r["region"]] += float(r["amount"])
for region in sorted(totals):
    print(f"{region}: {totals[region]:.2f}")
print("rows:", len(rows))
