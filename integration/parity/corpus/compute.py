# A little real work: primes, sorting, string building, dict churn.
import hashlib

primes = [n for n in range(2, 20000) if all(n % p for p in range(2, int(n**0.5) + 1))]
print(len(primes), primes[-5:])
words = sorted(("w%05d" % ((i * 7919) % 10007) for i in range(10007)), key=lambda w: (w[-1], w))
print(words[:3], words[-3:])
d = {}
for i in range(50000):
    d[i % 997] = d.get(i % 997, 0) + i
print(sum(d.values()), max(d, key=d.get))
print(hashlib.sha256("".join(words).encode()).hexdigest())
print(sorted({3.5, 1, -2, 10**20, 2.25}))
