"""abstract interface via NotImplementedError and polymorphism"""
class Shape:
    def area(self):
        raise NotImplementedError(type(self).__name__ + " must define area")

    def __str__(self):
        return f"{type(self).__name__}(area={self.area():.2f})"


class Rect(Shape):
    def __init__(self, w, h):
        self.w, self.h = w, h

    def area(self):
        return self.w * self.h


class Circle(Shape):
    def __init__(self, r):
        self.r = r

    def area(self):
        return 3.141592653589793 * self.r ** 2


class Blob(Shape):
    pass


for s in [Rect(2, 3), Circle(1)]:
    print(s)
try:
    print(Blob())
except NotImplementedError as e:
    print("error:", e)
