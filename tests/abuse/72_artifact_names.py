# Artifact names chosen to confuse the collector or its consumer: newlines, non-UTF-8 bytes,
# a leading dash, deep nesting, a name of 255 bytes. The result stays schema-valid and the
# worker does not crash.
# expect: status=ok
# expect: stdout-contains=names-made
names = [b"line\nbreak.txt", b"bad\xff\xfe.txt", b"-rf", b"x" * 255, b"..." , b" space "]
for n in names:
    fd = os.open(n, os.O_CREAT | os.O_WRONLY, 0o644)
    os.write(fd, b"content\xff\n")
    os.close(fd)
d = b"."
for i in range(40):
    d += b"/d"
    os.mkdir(d)
fd = os.open(d + b"/deep.txt", os.O_CREAT | os.O_WRONLY, 0o644)
os.close(fd)
print("names-made")
