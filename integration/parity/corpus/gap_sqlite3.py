try:
    import sqlite3

    db = sqlite3.connect(":memory:")
    db.execute("create table t (x)")
    db.execute("insert into t values (41 + 1)")
    print("sqlite3:", db.execute("select x from t").fetchall())
except ImportError as e:
    print("sqlite3 failed:", e)
