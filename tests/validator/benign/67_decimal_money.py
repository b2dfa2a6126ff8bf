"""decimal money calculations with rounding and context"""
from decimal import ROUND_HALF_EVEN, Decimal, localcontext

prices = [Decimal("0.10"), Decimal("0.20"), Decimal("19.995")]
print(sum(prices), sum(prices) == Decimal("20.295"))
cents = Decimal("0.01")
print([p.quantize(cents, rounding=ROUND_HALF_EVEN) for p in prices])
with localcontext() as ctx:
    ctx.prec = 5
    print(Decimal(1) / Decimal(3))
tax = (Decimal("123.45") * Decimal("0.0825")).quantize(cents)
print(f"tax {tax}, total {Decimal('123.45') + tax}")
