"""__slots__, properties with setters, classmethod and staticmethod"""
class Temperature:
    __slots__ = ("_celsius",)

    def __init__(self, celsius=0.0):
        self.celsius = celsius

    @property
    def celsius(self):
        return self._celsius

    @celsius.setter
    def celsius(self, v):
        if v < -273.15:
            raise ValueError("below absolute zero")
        self._celsius = v

    @property
    def fahrenheit(self):
        return self._celsius * 9 / 5 + 32

    @classmethod
    def from_f(cls, f):
        return cls((f - 32) * 5 / 9)

    @staticmethod
    def describe(c):
        return "hot" if c > 30 else "mild" if c > 10 else "cold"


t = Temperature.from_f(212)
print(t.celsius, t.fahrenheit, Temperature.describe(t.celsius))
try:
    t.celsius = -300
except ValueError as e:
    print("rejected:", e)
try:
    t.other = 1
except AttributeError as e:
    print("slots:", type(e).__name__)
