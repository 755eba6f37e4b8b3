import sys

for i in range(2000):
    print(i, "x" * (i % 50))
print("unicode: \u00e9 \u65e5 \U0001F600")
print("no newline at the end", end="")
sys.stdout.flush()
for i in range(5):
    print("err", i, file=sys.stderr)
sys.stdout.buffer.write(b"\nraw bytes \xc3\xa9\n")
