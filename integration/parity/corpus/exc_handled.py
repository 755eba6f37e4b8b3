import sys
import traceback


def boom(n):
    if n == 0:
        raise ZeroDivisionError("deep")
    return boom(n - 1)


try:
    boom(5)
except ZeroDivisionError:
    tb = traceback.format_exc().splitlines()
    print(len(tb), tb[0], tb[-1])
    print([line.strip() for line in tb if line.strip().startswith("return") or line.strip().startswith("raise")])
try:
    [].pop()
except IndexError as e:
    print(repr(e), e.args)
try:
    int("x")
except ValueError as e:
    print(e)
try:
    raise ExceptionGroup("group", [ValueError(1), TypeError(2)])
except* ValueError as eg:
    print("caught", eg.exceptions)
except* TypeError as eg:
    print("caught", eg.exceptions)
try:
    open("/workspace/no/such/file")
except FileNotFoundError as e:
    print("FileNotFoundError", e.filename)
print("warnings to stderr")
import warnings

warnings.warn("a warning")
sys.stderr.write("last stderr line\n")
