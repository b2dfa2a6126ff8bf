"""unicodedata normalisation and categories"""
import unicodedata

s = "Café naïve Ω ½"
print(unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode())
print([unicodedata.category(c) for c in "a1 Ω"])
print(unicodedata.name("½"), unicodedata.numeric("½"))
print(len(unicodedata.normalize("NFC", "e\u0301")), len("e\u0301"))
