# file access: open('/etc/passwd') under the strict profile.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "75_plain_open"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


with open("/etc/passwd") as f:
    if f.readline().startswith("root:"):
        won("read /etc/passwd")
