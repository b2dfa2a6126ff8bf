import sys
print("naïve café ✓", flush=True)
sys.stdout.buffer.write(b"raw:\xff\xfe\x00end\n")
