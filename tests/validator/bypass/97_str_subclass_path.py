# (data policy) a str subclass whose methods lie to os.path.realpath, while open() reads its
# characters.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "97_str_subclass_path"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


with open("ok.txt", "w") as f:
    f.write("fine")


class Sly(str):
    def startswith(self, *args):
        return False

    def partition(self, sep):
        return ("ok.txt", "", "")


with open(Sly("/etc/passwd")) as f:
    text = f.read()
if text.startswith("root:"):
    won(text[:20])
