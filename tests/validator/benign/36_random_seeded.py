"""random with a fixed seed"""
import random

rng = random.Random(42)
print([rng.randint(1, 100) for _ in range(5)])
print(rng.choice("abcdef"), round(rng.random(), 6))
deck = list(range(10))
rng.shuffle(deck)
print(deck, rng.sample(range(100), 3))
random.seed(7)
print(random.randrange(1000), round(random.gauss(0, 1), 6))
