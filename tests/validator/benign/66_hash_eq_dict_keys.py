"""__hash__ and __eq__ used for dict keys and set dedup"""
class Key:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __eq__(self, other):
        if not isinstance(other, Key):
            return NotImplemented
        return (self.a, self.b.lower()) == (other.a, other.b.lower())

    def __hash__(self):
        return hash((self.a, self.b.lower()))

    def __repr__(self):
        return f"Key({self.a}, {self.b!r})"


keys = [Key(1, "X"), Key(1, "x"), Key(2, "y")]
print(len(set(keys)), sorted(set(keys), key=lambda k: k.a))
d = {Key(1, "Name"): "first"}
d[Key(1, "NAME")] = "second"
print(d, Key(1, "a") == 3)
