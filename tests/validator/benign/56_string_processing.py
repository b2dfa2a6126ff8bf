"""string methods: split, join, partition, formatting, translate"""
s = "  Alice,Bob ,  carol,dave  "
names = [n.strip().capitalize() for n in s.split(",")]
print(names, ", ".join(sorted(names)))
key, _, value = "user=admin=root".partition("=")
print(key, value)
print("hello world".replace("o", "0").upper(), "abc".zfill(6), "x".ljust(3, ".") + "|")
print("racecar" == "racecar"[::-1], "Mississippi".count("ss"), "a-b-c".rsplit("-", 1))
print("snake_case_name".split("_")[0] + "".join(w.title() for w in "snake_case_name".split("_")[1:]))
print(" ".join(f"{ord(c):x}" for c in "hi!"))
