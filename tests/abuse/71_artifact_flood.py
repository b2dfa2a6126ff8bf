# Leaves 2,000 files and one of 12 MB in the working directory: artifact collection is capped
# in count and size, and the worker's memory stays bounded.
# expect: status=ok
# expect: stdout-contains=left-files
# expect: artifacts-count<=16
# expect: codeq-rss-mb<=150
# limits: memory_mb=128 wall_ms=5000
for i in range(2000):
    with open_(f"f{i:04d}.txt", "w") as f:
        f.write("x" * 100)
with open_("big.bin", "wb") as f:
    f.write(b"\xff" * (12 * 1024 * 1024))
print("left-files")
