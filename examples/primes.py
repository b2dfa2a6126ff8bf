def primes(n):
    sieve = [True] * (n + 1)
    sieve[0:2] = [False, False]
    for i in range(2, int(n ** 0.5) + 1):
        if sieve[i]:
            sieve[i * i :: i] = [False] * len(sieve[i * i :: i])
    return [i for i, p in enumerate(sieve) if p]


found = primes(100)
print(f"{len(found)} primes below 100, the largest {found[-1]}")
