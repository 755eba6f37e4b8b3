import csv
import io

with open("data.csv", newline="") as f:
    rows = list(csv.DictReader(f))
print(rows)
total = sum(int(r["qty"]) * float(r["price"]) for r in rows)
print("total", round(total, 2))
out = io.StringIO()
w = csv.writer(out, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
w.writerow(["name", "value"])
w.writerow(['say "hi"', 1.5])
w.writerow(["comma, inside", -2])
print(out.getvalue(), end="")
print(list(csv.reader(io.StringIO(out.getvalue()))))
print(csv.Sniffer().sniff("a;b;c\n1;2;3\n").delimiter)
b = io.BytesIO()
t = io.TextIOWrapper(b, encoding="utf-8", newline="\r\n")
t.write("line1\nline2 é\n")
t.flush()
print(b.getvalue())
with open("summary.csv", "w", newline="") as f:
    csv.writer(f).writerows([[r["name"], r["qty"]] for r in rows])
print(open("summary.csv").read(), end="")
