# Reads an input file from its working directory and leaves an output file as an artifact.
with open("data.csv") as f:
    rows = [line.strip().split(",") for line in f if line.strip()]
total = sum(int(r[1]) for r in rows[1:])
with open("report.txt", "w") as out:
    out.write(f"{len(rows) - 1} rows, total {total}\n")
print(total)
