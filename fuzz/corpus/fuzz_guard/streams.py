import sys, io

data = sys.stdin.read()
buf = io.StringIO()
print(len(data), file=buf)
sys.stdout.write(buf.getvalue())
sys.stdout.buffer.write(b"bytes\n")
print(type(sys.stdin.buffer).__name__)
