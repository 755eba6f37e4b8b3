# sqlite3 in WAL mode, as scripts turn it on for speed: the mode and its
# files, readers that keep their snapshot while a writer commits, a writer
# locked out by another, checkpoints, the files' sizes and header, and the
# mode kept in the database after every connection closed.
import os
import sqlite3


def files():
    return sorted((n, os.path.getsize(n)) for n in os.listdir(".") if n.startswith("wal.db"))


def header(path):
    with open(path, "rb") as f:
        h = f.read(100)
    return "version bytes %d %d, page size %d" % (h[18], h[19], int.from_bytes(h[16:18], "big"))


db = sqlite3.connect("wal.db", isolation_level=None)
print("journal_mode:", db.execute("pragma journal_mode").fetchone()[0])
print("to wal:", db.execute("pragma journal_mode=wal").fetchone()[0])
print("again:", db.execute("pragma journal_mode=wal").fetchone()[0])
print("synchronous:", db.execute("pragma synchronous").fetchone()[0])
print("autocheckpoint:", db.execute("pragma wal_autocheckpoint").fetchone()[0])
db.execute("create table t (id integer primary key, v text)")
db.executemany("insert into t (v) values (?)", [("row %d" % i,) for i in range(50)])
print("files, open:", files())
print(header("wal.db"))

# A reader keeps its snapshot while the writer commits.
reader = sqlite3.connect("wal.db", isolation_level=None)
reader.execute("begin")
print("reader sees:", reader.execute("select count(*) from t").fetchone()[0])
db.execute("begin immediate")
db.execute("insert into t (v) values ('late')")
print("writer sees before commit:", db.execute("select count(*) from t").fetchone()[0])
print("reader during the write:", reader.execute("select count(*) from t").fetchone()[0])
db.execute("commit")
print("reader after the commit, same transaction:", reader.execute("select count(*) from t").fetchone()[0])
reader.execute("commit")
print("reader, new transaction:", reader.execute("select count(*) from t").fetchone()[0])

# A second writer is locked out while one holds the write lock.
other = sqlite3.connect("wal.db", timeout=0, isolation_level=None)
db.execute("begin immediate")
try:
    other.execute("begin immediate")
    print("second writer: got the lock")
except sqlite3.OperationalError as e:
    print("second writer:", e)
db.execute("rollback")
other.execute("begin immediate")
other.execute("update t set v = 'changed' where id = 1")
other.execute("commit")
print("first sees the other's write:", db.execute("select v from t where id = 1").fetchone()[0])

# Checkpoints.
print("checkpoint passive:", db.execute("pragma wal_checkpoint(passive)").fetchone())
print("files:", files())
print("checkpoint truncate:", db.execute("pragma wal_checkpoint(truncate)").fetchone())
print("files after truncate:", files())
db.execute("insert into t (v) values ('after')")
print("files after a write:", files())

for c in (reader, other, db):
    c.close()
print("files, closed:", files())

again = sqlite3.connect("wal.db")
print("mode kept:", again.execute("pragma journal_mode").fetchone()[0])
print("rows:", again.execute("select count(*), min(v), max(v) from t").fetchone())
print("integrity:", again.execute("pragma integrity_check").fetchone()[0])
print("back to delete:", again.execute("pragma journal_mode=delete").fetchone()[0])
again.close()
print(header("wal.db"))
print("files, delete mode:", files())

# An in-memory database has no WAL: it answers memory.
mem = sqlite3.connect(":memory:")
print("memory:", mem.execute("pragma journal_mode=wal").fetchone()[0])
mem.close()
os.remove("wal.db")
