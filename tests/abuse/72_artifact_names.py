# Artifact names chosen to confuse the collector or its consumer: newlines, non-UTF-8 bytes,
# a leading dash, deep nesting, a name of 255 bytes. The result stays schema-valid and the
# worker does not crash; every file within the limits comes back, the one whose name is not
# UTF-8 too (as path_base64, issue 11: it used to vanish from the list).
# expect: status=ok
# expect: artifacts-bytes-include=YmFk//4udHh0,bGluZQpicmVhay50eHQ=,LXJm,Li4u,IHNwYWNlIA==
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
