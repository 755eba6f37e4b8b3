import cmath
import math
import statistics

print(math.pi, math.e, math.tau, math.inf, math.nan != math.nan)
print(math.sqrt(2), math.exp(1.5), math.log(10), math.log2(1024), math.log10(0.001))
print(math.sin(1), math.cos(1), math.atan2(1, -1), math.hypot(3, 4, 12))
print(math.factorial(30), math.comb(50, 25), math.perm(10, 3), math.gcd(84, 126), math.lcm(4, 6))
print(math.isqrt(10**30 + 1), math.fsum([0.1] * 10), math.prod(range(1, 11)))
print(math.floor(-2.5), math.ceil(-2.5), math.trunc(-2.5), math.copysign(1, -0.0), math.frexp(40.0))
print(math.gamma(0.5), math.lgamma(100), math.erf(0.5), math.nextafter(1, 2), math.ulp(1))
print(cmath.sqrt(-1), cmath.exp(1j * math.pi), cmath.polar(1 + 1j))
xs = [2.5, 3.1, 4.7, 1.2, 9.9, 3.1, 5.5]
print(statistics.mean(xs), statistics.median(xs), statistics.mode(xs))
print(statistics.stdev(xs), statistics.pvariance(xs), statistics.quantiles(xs, n=4))
print(statistics.correlation([1, 2, 3, 4], [2, 4, 5, 9]), statistics.linear_regression([1, 2, 3], [2, 4, 7]))
print(statistics.NormalDist(0, 1).cdf(1.96), statistics.geometric_mean([1, 2, 4]))
