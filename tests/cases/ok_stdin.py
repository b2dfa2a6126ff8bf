import sys
data = sys.stdin.read()
print(data.upper(), end="")
