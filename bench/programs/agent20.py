"""Word statistics: a short agent-style program (20 lines)."""
from collections import Counter
import re

TEXT = """The validator parses the program. The sandbox runs the program.
Agents submit programs; workers validate, run and report them."""


def words(text: str) -> list:
    return [w.lower() for w in re.findall(r"[A-Za-z']+", text)]


def main() -> None:
    counts = Counter(words(TEXT))
    for word, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:5]:
        print(f"{word:<10} {n}")


if __name__ == "__main__":
    main()
