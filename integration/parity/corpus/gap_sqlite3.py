# What sqlite3 still lacks under WASI: threads (threadsafety 0) and loadable
# extensions. WAL is there on both (std_sqlite3_wal.py).
import os
import sqlite3

db = sqlite3.connect("wal.db")
print("journal_mode=wal:", db.execute("pragma journal_mode=wal").fetchone()[0])
db.execute("create table t (x)")
db.execute("insert into t values (42)")
db.commit()
print("rows:", db.execute("select x from t").fetchall())
print("threadsafety:", sqlite3.threadsafety)
print("enable_load_extension:", hasattr(db, "enable_load_extension"))
db.close()
os.remove("wal.db")
