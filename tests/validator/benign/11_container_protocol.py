"""__len__, __getitem__, __iter__, __contains__ on a custom container"""
class Deck:
    ranks = [str(n) for n in range(2, 11)] + list("JQKA")
    suits = "spades diamonds clubs hearts".split()

    def __init__(self):
        self._cards = [(r, s) for s in self.suits for r in self.ranks]

    def __len__(self):
        return len(self._cards)

    def __getitem__(self, i):
        return self._cards[i]

    def __iter__(self):
        return iter(self._cards)

    def __contains__(self, card):
        return card in self._cards


d = Deck()
print(len(d), d[0], d[-1], d[12::13])
print(("Q", "hearts") in d, ("1", "x") in d)
print(sum(1 for r, s in d if s == "clubs"))
