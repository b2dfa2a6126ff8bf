# One 200 MB write with no newline to stderr, then to stdout: the cap holds on a single write
# and the worker does not buffer it.
# expect: status=output_limit
# expect: truncated=any
# expect: codeq-rss-mb<=150
# limits: output_bytes=65536 memory_mb=400 wall_ms=4000
big = b"z" * (200 * 1024 * 1024)
os.write(2, big)
os.write(1, big)
