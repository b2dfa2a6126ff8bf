"""__call__, __getitem__/__setitem__/__delitem__, __contains__, __str__, __format__ on own classes"""


class Polynomial:
    def __init__(self, *coeffs):
        self.coeffs = list(coeffs)

    def __call__(self, x):
        return sum(c * x ** i for i, c in enumerate(self.coeffs))

    def __getitem__(self, i):
        return self.coeffs[i] if i < len(self.coeffs) else 0

    def __setitem__(self, i, v):
        while len(self.coeffs) <= i:
            self.coeffs.append(0)
        self.coeffs[i] = v

    def __delitem__(self, i):
        self.coeffs[i] = 0

    def __contains__(self, c):
        return c in self.coeffs

    def __str__(self):
        terms = [f"{c}x^{i}" if i else str(c) for i, c in enumerate(self.coeffs) if c]
        return " + ".join(reversed(terms)) or "0"

    def __format__(self, spec):
        return format(str(self), spec)


p = Polynomial(1, 0, 2)
print(p(3), p[2], p[7], 2 in p)
p[4] = 5
del p[0]
print(str(p), f"[{p:>20}]", 1 in p)
