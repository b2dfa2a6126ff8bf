"""exact arithmetic with fractions and decimal"""
from decimal import ROUND_HALF_UP, Decimal, getcontext
from fractions import Fraction

getcontext().prec = 28
total = sum(Fraction(1, n) for n in range(1, 11))
print(total, float(total))
price = Decimal("19.99") * 3
print(price, price.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))
print(Decimal(1) / Decimal(7))
print(Fraction("3/4") + Fraction(1, 4) == 1)
