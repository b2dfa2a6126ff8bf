"""string constants and Template"""
import string

print(string.ascii_lowercase[:5], string.digits, len(string.punctuation))
t = string.Template("Hello $name, you owe $$${amount}")
print(t.substitute(name="Ann", amount="5.00"))
print(t.safe_substitute(name="Bob"))
print(string.capwords("the quick  brown fox"))
table = str.maketrans(string.ascii_lowercase, string.ascii_lowercase[3:] + string.ascii_lowercase[:3])
print("caesar".translate(table))
