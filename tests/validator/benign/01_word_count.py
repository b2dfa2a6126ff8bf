"""word frequencies from stdin with collections.Counter"""
from collections import Counter


def main() -> None:
    text = input() + "\n"
    while True:
        try:
            text += input() + "\n"
        except EOFError:
            break
    words = [w.strip(".,;:!?").lower() for w in text.split()]
    counts = Counter(w for w in words if w)
    for word, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:5]:
        print(f"{word:<10}{n:>3}")


if __name__ == "__main__":
    main()
