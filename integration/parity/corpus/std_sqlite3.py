# sqlite3 as agents use it, identical on both backends: a database file in
# the workspace, transactions, a second connection that finds it locked,
# functions, JSON, FTS5, window functions, backup and dump.
import os
import sqlite3

print("sqlite", sqlite3.sqlite_version)
db = sqlite3.connect("data.db")
db.row_factory = sqlite3.Row
db.execute("create table items (id integer primary key, name text unique, qty integer, price real, tags text)")
rows = [("apple", 3, 0.5, '["fruit", "red"]'), ("bread", 1, 2.25, '["bakery"]'), ("cheese", 2, 7.0, '["dairy"]')]
db.executemany("insert into items (name, qty, price, tags) values (?, ?, ?, ?)", rows)
db.commit()
for r in db.execute("select id, name, qty * price as total from items order by total desc"):
    print(dict(r))
db.row_factory = None
print("json:", db.execute("select name, json_extract(tags, '$[0]') from items where json_array_length(tags) > 1").fetchall())
print("upsert/returning:", db.execute(
    "insert into items (name, qty, price) values ('apple', 5, 0.5) "
    "on conflict(name) do update set qty = qty + excluded.qty returning name, qty").fetchall())
db.commit()
print("window:", db.execute(
    "select name, sum(qty) over (order by name rows between unbounded preceding and current row) from items").fetchall())
print("math/date:", db.execute("select sqrt(2.0), round(pi(), 5), date('2024-02-28', '+1 day'), strftime('%j', '2024-12-31')").fetchone()[:])

# A second connection: it sees committed data only, and a writer locks it out.
other = sqlite3.connect("data.db", timeout=0)
db.execute("update items set qty = 0 where name = 'bread'")
print("other sees uncommitted?", other.execute("select qty from items where name = 'bread'").fetchone())
try:
    other.execute("insert into items (name, qty, price) values ('eggs', 12, 0.2)")
except sqlite3.OperationalError as e:
    print("other writes:", type(e).__name__, e)
db.rollback()
other.execute("insert into items (name, qty, price) values ('eggs', 12, 0.2)")
other.commit()
print("after other's commit:", db.execute("select count(*) from items").fetchone()[0])
other.close()

# Rollback, constraints, user functions, aggregates, collations.
try:
    with db:
        db.execute("insert into items (name, qty, price) values ('flour', 1, 1.0)")
        db.execute("insert into items (name, qty, price) values ('apple', 1, 1.0)")
except sqlite3.IntegrityError as e:
    print("integrity:", e, db.execute("select count(*) from items where name = 'flour'").fetchone()[0])
db.create_function("shout", 1, lambda s: s.upper() + "!", deterministic=True)


class Product:
    def __init__(self):
        self.value = 1.0

    def step(self, x):
        self.value *= x

    def finalize(self):
        return self.value


db.create_aggregate("product", 1, Product)
db.create_collation("reverse", lambda a, b: (a < b) - (a > b))
print("functions:", db.execute("select shout(name), product(qty) from items where qty > 0 group by qty > 0").fetchall())
print("collation:", [r[0] for r in db.execute("select name from items order by name collate reverse")])
db.execute("create virtual table notes using fts5(body)")
db.executemany("insert into notes values (?)", [("the quick brown fox",), ("lazy dogs sleep",), ("quick thinking",)])
print("fts5:", db.execute("select body from notes where notes match 'quick' order by rank").fetchall())
db.execute("create virtual table boxes using rtree(id, x0, x1)")
db.execute("insert into boxes values (1, 0, 10), (2, 5, 15)")
print("rtree:", db.execute("select id from boxes where x1 >= 12").fetchall())
db.commit()

# Types, adapters, blobs, a big sort, backup and dump.
mem = sqlite3.connect(":memory:", detect_types=sqlite3.PARSE_DECLTYPES)
mem.execute("create table t (b blob, n integer, f real, s text)")
mem.execute("insert into t values (?, ?, ?, ?)", (b"\x00\xff", 2**62, 1e-300, "é✓"))
print("types:", mem.execute("select b, n, f, s, typeof(b), typeof(n), length(s) from t").fetchone())
print("sorted:", mem.execute(
    "with recursive c(i) as (select 1 union all select i + 1 from c where i < 300000) "
    "select count(*), sum(i), min(i * 7919 % 300007) from (select i from c order by i * 7919 % 300007)").fetchone())
spill = sqlite3.connect("")  # a private on-disk database in the temporary directory
spill.execute("pragma cache_size=-64")  # 64 KiB of cache: pages go to the file
spill.execute("create table big (k integer, v text)")
spill.executemany("insert into big values (?, ?)", ((i * 7919 % 100003, "v%06d" % i) for i in range(100000)))
print("spilled:", spill.execute("select count(*), sum(k), max(v) from (select * from big order by k, v)").fetchone())
spill.close()
backup = sqlite3.connect(":memory:")
db.backup(backup)
print("backup:", backup.execute("select count(*) from items").fetchone()[0])
print("dump lines:", len(list(db.iterdump())))
print("integrity_check:", db.execute("pragma integrity_check").fetchone()[0])
db.close()
print("files:", sorted(f for f in os.listdir(".") if f.startswith("data.db")))
