"""__name__ == '__main__' with a main() returning an exit code"""
def parse(argv):
    opts = {"verbose": False, "n": 3}
    for a in argv:
        if a == "-v":
            opts["verbose"] = True
        elif a.startswith("-n"):
            opts["n"] = int(a[2:])
    return opts


def main(argv) -> int:
    opts = parse(argv)
    for i in range(opts["n"]):
        print("line", i)
    print("module name:", __name__)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(["-n2"]))
