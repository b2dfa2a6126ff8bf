"""a typical agent-style inventory manager"""
class Item:
    def __init__(self, sku, name, qty, price):
        self.sku, self.name, self.qty, self.price = sku, name, qty, price

    @property
    def value(self):
        return self.qty * self.price

    def __repr__(self):
        return f"Item({self.sku!r}, qty={self.qty})"


class Inventory:
    def __init__(self):
        self.items = {}

    def add(self, item):
        if item.sku in self.items:
            self.items[item.sku].qty += item.qty
        else:
            self.items[item.sku] = item

    def remove(self, sku, qty):
        item = self.items.get(sku)
        if item is None or item.qty < qty:
            raise ValueError(f"cannot remove {qty} of {sku}")
        item.qty -= qty

    def report(self):
        for sku in sorted(self.items):
            it = self.items[sku]
            print(f"{sku:6} {it.name:10} {it.qty:4d} {it.value:9.2f}")
        print(f"{'total':>21} {sum(i.value for i in self.items.values()):9.2f}")


inv = Inventory()
inv.add(Item("A1", "bolts", 100, 0.05))
inv.add(Item("B2", "nuts", 250, 0.02))
inv.add(Item("A1", "bolts", 20, 0.05))
try:
    inv.remove("B2", 1000)
except ValueError as e:
    print("error:", e)
inv.remove("B2", 50)
inv.report()
