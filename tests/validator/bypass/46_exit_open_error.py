# item 29: exit(open('/etc/passwd').readline()) leaks a file through SystemExit.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "46_exit_open_error"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


try:
    exit(open("/etc/passwd").readline())
except SystemExit as e:
    if any(str(a).startswith("root:") for a in e.args):
        won("read /etc/passwd through SystemExit")
