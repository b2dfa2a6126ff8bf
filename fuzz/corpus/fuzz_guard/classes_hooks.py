import copy, pprint, json


class P:
    def __init__(self, v):
        self.v = v

    def __fspath__(self):
        return "main.py"

    def __reduce__(self):
        return (P, (self.v,))

    def __format__(self, spec):
        return "P" + spec

    def __eq__(self, o):
        return True


p = copy.deepcopy(P(3))
print(p.v, format(p, "x"), "{0[0]}".format([p.v]))
pprint.pprint({"a": [p.v] * 3})
print(json.dumps({"k": p.v}))
match p:
    case P(v=w):
        print(w)
