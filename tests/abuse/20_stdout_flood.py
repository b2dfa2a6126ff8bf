# Unbounded printing: killed at the output cap, head kept, and the worker's memory stays bounded.
# expect: status=output_limit
# expect: truncated=stdout
# expect: codeq-rss-mb<=150
# limits: output_bytes=10000 wall_ms=3000
while True:
    print("abcdefghij")
