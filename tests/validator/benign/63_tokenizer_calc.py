"""a tiny tokenizer and recursive-descent calculator"""
import re

TOKEN = re.compile(r"\s*(?:(\d+\.?\d*)|(.))")


def tokenize(s):
    for num, op in TOKEN.findall(s):
        yield ("num", float(num)) if num else ("op", op)


class Parser:
    def __init__(self, text):
        self.tokens = list(tokenize(text)) + [("end", None)]
        self.i = 0

    def peek(self):
        return self.tokens[self.i]

    def take(self):
        t = self.tokens[self.i]
        self.i += 1
        return t

    def expr(self):
        v = self.term()
        while self.peek() in (("op", "+"), ("op", "-")):
            v = v + self.term() if self.take()[1] == "+" else v - self.term()
        return v

    def term(self):
        v = self.factor()
        while self.peek() in (("op", "*"), ("op", "/")):
            v = v * self.factor() if self.take()[1] == "*" else v / self.factor()
        return v

    def factor(self):
        kind, val = self.take()
        if kind == "num":
            return val
        if val == "(":
            v = self.expr()
            self.take()
            return v
        if val == "-":
            return -self.factor()
        raise SyntaxError(f"unexpected {val!r}")


for e in ["1 + 2 * 3", "(1 + 2) * 3", "-4 / (2 - 4)", "2 * (3 + (4 - 1)) / 3"]:
    print(e, "=", Parser(e).expr())
