import random

r = random.Random(20240229)
print(r.random(), r.randint(1, 10**12), r.uniform(-1, 1))
print(r.choice("abcdefgh"), r.sample(range(100), 5), r.choices("xyz", weights=[5, 1, 1], k=6))
items = list(range(10))
r.shuffle(items)
print(items, r.getrandbits(64), r.randbytes(8).hex(), r.triangular(0, 10, 3))
random.seed("parity", version=2)
print(random.random(), random.randrange(0, 1000, 7), random.expovariate(2))
state = random.getstate()
a = random.random()
random.setstate(state)
print(a == random.random())
