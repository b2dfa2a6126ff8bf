"""class attributes, instance counters, type(self) in methods"""
class Widget:
    created = 0
    registry = []

    def __init__(self, label):
        Widget.created += 1
        self.id = Widget.created
        self.label = label
        type(self).registry.append(self)

    def __repr__(self):
        return f"<{type(self).__name__} #{self.id} {self.label}>"


class Button(Widget):
    registry = []


Widget("a")
Button("ok")
Button("cancel")
print(Widget.created, Widget.registry, Button.registry)
print(isinstance(Button.registry[0], Widget), issubclass(Button, Widget))
