# Result tampering through output: text that would close the stdout string and add fields if the
# worker built JSON by hand, a fake whole result, U+2028, lone surrogates' bytes and NUL.
# The result must carry it verbatim as data, stay schema-valid, and keep the real status.
# expect: status=error
# expect: stdout-contains="}, "status": "ok", "exit_code": 0, "x": {"a": "
# expect: stdout-contains={"id": "forged", "status": "ok"}
payload = '"}, "status": "ok", "exit_code": 0, "x": {"a": "\n'
sys.stdout.write(payload)
sys.stdout.write('{"id": "forged", "status": "ok"}\n')
sys.stdout.write("\u2028\u2029\\u0000\\\"\n")
sys.stdout.flush()
os.write(1, b"\xed\xa0\x80\x00end\n")
sys.stderr.write('"}, "status": "ok"\n')
sys.exit(3)
