# decimal at precisions far above the usual: exact results at MAX_PREC (the
# wazero build tries libmpdec's small precision first above ten million
# digits, as x86-64 does when the full precision cannot be allocated), and
# the cases where that attempt must give way to the full computation.
import decimal as D

P = 10**7 + 1


def show(label, ctx, f):
    with D.localcontext(ctx) as c:
        try:
            r = f()
        except D.DecimalException as e:
            print(label, "raises", type(e).__name__)
            return
    s = str(r)
    if len(s) > 40:
        s = f"{len(s)} characters ...{s[-6:]} adjusted {r.adjusted()}"
    print(label, s, sorted(k.__name__ for k, v in c.flags.items() if v))


top = D.Context(prec=D.MAX_PREC, Emin=D.MIN_EMIN, Emax=D.MAX_EMAX, traps=[])
for label, f in [
    ("sqrt 4", lambda: D.Decimal(4).sqrt()),
    ("sqrt 40E9", lambda: D.Decimal("40E9").sqrt()),
    ("sqrt 1.21", lambda: D.Decimal("1.21").sqrt()),
    ("sqrt 6.25E-8", lambda: D.Decimal("6.25E-8").sqrt()),
    ("4 / 2", lambda: D.Decimal(4) / 2),
    ("1 / 8", lambda: D.Decimal(1) / 8),
    ("-7E+30 / 2.5E-3", lambda: D.Decimal("-7E+30") / D.Decimal("2.5E-3")),
    ("1.20 / 0.4", lambda: D.Decimal("1.20") / D.Decimal("0.4")),
    ("400 ** -1", lambda: D.Decimal(400) ** -1),
    ("1024 ** -3", lambda: D.Decimal(1024) ** -3),
    ("divmod", lambda: divmod(D.Decimal(10), 3)[1]),
]:
    show(label, top, f)

big = D.Context(prec=P, traps=[])
show("1 / 3", big, lambda: D.Decimal(1) / 3)
show("1 / 16", big, lambda: D.Decimal(1) / 16)
show("0E+5 / 7", big, lambda: D.Decimal("0E+5") / 7)
show("NaN123 / 2", big, lambda: D.Decimal("NaN123") / 2)
show("1 / 0", big, lambda: D.Decimal(1) / 0)
# A subnormal quotient, exact: the small precision's attempt reports
# Subnormal and the full computation decides.
show("1E-9 / 100", D.Context(prec=P, Emin=-10, Emax=10, traps=[]), lambda: D.Decimal("1E-9") / 100)
show("1E-9 / 3", D.Context(prec=P, Emin=-10, Emax=10, traps=[]), lambda: D.Decimal("1E-9") / 3)
show("8E+9 / 2", D.Context(prec=P, Emin=-10, Emax=10, traps=[]), lambda: D.Decimal("8E+9") / 2)
# With clamp the exponent's ceiling falls with the precision: the full
# precision's answer stands.
show("6E+9 / 2 clamp", D.Context(prec=P, Emax=P + 5, clamp=1, traps=[]), lambda: D.Decimal("6E+9") / 2)
