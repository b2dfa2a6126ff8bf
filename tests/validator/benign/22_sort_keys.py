"""sorting with key functions, reverse, operator.itemgetter/attrgetter"""
from operator import attrgetter, itemgetter

people = [("ann", 31, "ny"), ("bob", 25, "sf"), ("cid", 31, "la"), ("dee", 19, "ny")]
print(sorted(people, key=itemgetter(1)))
print(sorted(people, key=lambda p: (-p[1], p[0])))
print(sorted(people, key=itemgetter(2, 0), reverse=True))


class P:
    def __init__(self, name, age):
        self.name, self.age = name, age

    def __repr__(self):
        return self.name


objs = [P(n, a) for n, a, _ in people]
print(sorted(objs, key=attrgetter("age", "name")))
print(min(objs, key=attrgetter("age")), max(people, key=itemgetter(1)))
