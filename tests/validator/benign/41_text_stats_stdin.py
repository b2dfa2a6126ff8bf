"""text processing of stdin: lines, vowels, longest words"""
lines = []
while True:
    try:
        lines.append(input())
    except EOFError:
        break
words = [w for line in lines for w in line.split()]
vowels = sum(ch in "aeiouAEIOU" for line in lines for ch in line)
print(f"lines={len(lines)} words={len(words)} vowels={vowels}")
longest = sorted(set(words), key=lambda w: (-len(w), w))[:3]
print("longest:", ", ".join(longest))
for i, line in enumerate(lines, 1):
    print(f"{i:>2}: {line[::-1]}")
