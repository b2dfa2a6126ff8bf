# Result tampering the other way: a job that closes its own stdout and then goes on and ends
# normally is `ok`, as the interpreter says, in both modes (the zygote took a closed
# sys.stdout for a failed flush at exit and reported `error`, exit 120).
# expect: status=ok
# expect: stdout-contains=BLOCKED:closed-stdout
blocked("closed-stdout", "then running on")
sys.stdout.close()
n = sum(i for i in range(10**5))
print("still running", n, file=sys.stderr, flush=True)
