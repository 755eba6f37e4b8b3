import decimal
from decimal import Decimal
from fractions import Fraction

decimal.getcontext().prec = 40
print(Decimal(1) / Decimal(7))
print(Decimal("0.1") + Decimal("0.2"), Decimal("2").sqrt())
print(Decimal("1.005").quantize(Decimal("0.01"), rounding=decimal.ROUND_HALF_EVEN))
print(Decimal("123.456e-7").normalize(), Decimal("-0"), Decimal("NaN").is_nan())
print(Fraction(3, 4) + Fraction(5, 6), Fraction("0.125"), Fraction(2**0.5).limit_denominator(1000))
print(sum(Fraction(1, n) for n in range(1, 20)))
print(0.1 + 0.2, 1 / 3, 2**0.5, 10**25 // 7, divmod(-7, 3), round(2.675, 2))
print(int("ff", 16), hex(2**64), (2**100).bit_length(), float.fromhex("0x1.8p1"))
