# (data policy) __fspath__ answers a workdir path to the check and /etc/passwd to the open.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "96_fspath_check_then_open"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


with open("ok.txt", "w") as f:
    f.write("fine")


class Path:
    calls = 0

    def __fspath__(self):
        Path.calls += 1
        return "/work/ok.txt" if Path.calls == 1 else "/etc/passwd"


with open(Path()) as f:
    text = f.read()
if text.startswith("root:"):
    won(text[:20])
