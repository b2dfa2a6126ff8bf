"""__enter__/__exit__ of a class the program defines"""
class Tracker:
    def __init__(self, name):
        self.name = name
        self.events = []

    def __enter__(self):
        self.events.append("enter " + self.name)
        return self

    def __exit__(self, exc_type, exc, tb):
        self.events.append("exit " + (exc_type.__name__ if exc_type else "clean"))
        return exc_type is ValueError


with Tracker("a") as t:
    t.events.append("body")
with Tracker("b") as u:
    raise ValueError("swallowed")
print(t.events)
print(u.events)
