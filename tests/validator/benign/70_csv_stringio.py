"""csv module over io.StringIO: DictReader, DictWriter, quoting"""
import csv
import io

raw = 'name,city,score\n"Smith, Ann",Oslo,91\nBo,"Rome",78\nCy,Oslo,85\n'
rows = list(csv.DictReader(io.StringIO(raw)))
best = max(rows, key=lambda r: int(r["score"]))
print(len(rows), best["name"], sorted({r["city"] for r in rows}))
out = io.StringIO()
w = csv.DictWriter(out, fieldnames=["city", "avg"], lineterminator="\n")
w.writeheader()
for city in sorted({r["city"] for r in rows}):
    scores = [int(r["score"]) for r in rows if r["city"] == city]
    w.writerow({"city": city, "avg": f"{sum(scores) / len(scores):.1f}"})
print(out.getvalue(), end="")
