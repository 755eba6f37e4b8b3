# SQLite's own conversions between text and REAL: a text value stored in a
# REAL column (as csv.reader hands them over), a literal in SQL text,
# CAST, round() and printf. SQLite computes them in long double, which
# x86-64's libsqlite3 has as the x87's 64-bit significand: its answers
# are not always the nearest double (-557053.0125902 reads as
# -557053.0125901999). Under wazero long double was IEEE binary128, so
# SQLite answered otherwise now and then: the nearest double, or another
# last digit (python/wasi/patches/sqlite3/wasi-x87-long-double.patch).
import hashlib
import random
import sqlite3

con = sqlite3.connect(":memory:")
con.execute("CREATE TABLE prices(amount REAL)")
texts = ["-557053.0125902", "-154916.04611630", "7.9889e+28", "-3.16487819e-07", "19.99", "0.1"]
con.executemany("INSERT INTO prices VALUES (?)", [(t,) for t in texts])
print("stored:", [v for (v,) in con.execute("SELECT amount FROM prices")])
print("literal:", con.execute("SELECT -557053.0125902, 1e-300 * 1e-10, 2.5e-310").fetchone())
print("round:", con.execute("SELECT round(967.578913362714, 6), round(0.1328676842292138, 6)").fetchone())
print("sum:", con.execute("SELECT sum(amount), avg(amount) FROM prices").fetchone())
print("printf:", con.execute("SELECT printf('%!.20g %.3e %f %g', 1.0/3, 6.02214076e23, 2.675, 1e-5)").fetchone())
print("quote:", con.execute("SELECT quote(1.0/3), quote(12.1), quote(-0.0), quote(1e308 * 10)").fetchone())
for line in con.iterdump():
    print("dump:", line)

# Many values, hashed: every conversion must agree.
rng = random.Random(63)
h = hashlib.sha256()
for _ in range(3000):
    digits = rng.randint(6, 19)
    text = "%.*e" % (digits - 1, rng.uniform(-1, 1) * 10 ** rng.randint(-320, 308))
    a, b, c, d = con.execute(
        "SELECT CAST(? AS REAL), round(CAST(? AS REAL), ?), printf('%!.20g', CAST(? AS REAL)), printf('%.*f', ?, ?)",
        (text, text, rng.randint(0, 12), text, rng.randint(0, 20), rng.uniform(-1e6, 1e6))).fetchone()
    h.update(repr((a, b, c, d)).encode())
print("3000 conversions:", h.hexdigest()[:32])
