# Result tampering: the job prints what a MemoryError looks like and exits 1 without using any
# memory. The verdict must come from the kernel's record (cgroup OOM), not from the job's text.
# expect: status=error
# expect: stdout-contains=faking
print("faking", flush=True)
sys.stderr.write("Traceback (most recent call last):\nMemoryError\n")
sys.stderr.flush()
os._exit(1)
