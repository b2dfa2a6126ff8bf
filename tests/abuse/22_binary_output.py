# Invalid UTF-8, NUL bytes and terminal escapes on stdout: carried safely (base64 beside the
# replaced text), the worker does not crash.
# expect: status=ok
# expect: base64-present
# expect: stdout-contains=tail-ok
os.write(1, b"\xff\xfe\x00\x1b[2J\x1b]0;pwn\x07\xc3\x28 \xed\xa0\x80 tail-ok\n")
