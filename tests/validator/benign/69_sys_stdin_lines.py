"""sys.stdin iteration, sys.stdout.write and sys.exit: the commonest agent I/O idiom"""
import sys


def main() -> int:
    totals = {}
    for line in sys.stdin:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, value = line.partition("=")
        totals[name.strip()] = totals.get(name.strip(), 0) + int(value)
    for name in sorted(totals):
        sys.stdout.write(f"{name}: {totals[name]}\n")
    print("warnings: none", file=sys.stderr)
    return 0 if totals else 1


if __name__ == "__main__":
    sys.exit(main())
