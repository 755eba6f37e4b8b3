# The C math library: glibc natively, wasi-libc (musl's libm) under WASI.
# Most results agree to the last bit; some differ in the last place.
import math
import random

r = random.Random(20240229)
r.random(), r.randint(1, 10**12), r.uniform(-1, 1)
print("gauss", repr(r.gauss(0, 1)))
print("sin+cos+log+sqrt", repr(math.cos(1.7) * math.sqrt(-2.0 * math.log(0.3))))
print("pow", repr(2.0**0.5), repr(math.pow(10, -3.3)), repr(math.exp(-7.25)))
