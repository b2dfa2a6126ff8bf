"""math library use"""
import math

print(math.gcd(84, 36), math.lcm(4, 6))
print(math.isqrt(99), math.sqrt(2))
print(math.comb(10, 3), math.perm(5, 2), math.factorial(10))
print(f"{math.pi:.6f} {math.e:.4e}")
print(math.hypot(3, 4), math.floor(-2.5), math.ceil(2.1))
print(math.isclose(0.1 + 0.2, 0.3), math.log(1024, 2), math.inf > 10**100)
