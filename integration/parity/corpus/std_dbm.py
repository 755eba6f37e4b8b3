# dbm and shelve as agents use them, identical on both backends: Berkeley
# DB hash files (Debian's libdb 5.3 under dbm.ndbm on both), what dbm.open
# and shelve pick, whichdb, the files they leave, read-only handles. With
# "write" it leaves a database and a shelf in the workspace; with "read" it
# prints them: TestDbmFilesAcrossBackends passes them from each backend to
# the other. A Berkeley DB file carries an id made of its inode and the
# time, so the plain run removes its files before it ends.
import dbm
import dbm.ndbm
import os
import shelve
import sys


def show_db(path):
    with dbm.open(path, "r") as db:
        keys = sorted(db.keys())
        print(path, dbm.whichdb(path), len(db), keys[:3], keys[-1])
        print(" ", db[b"alpha"], db.get(b"missing", b"-"), b"beta" in db)


def show_shelf(path):
    with shelve.open(path, "r") as s:
        print(path, dbm.whichdb(path), sorted(s.keys()), s["config"], s["rows"][-1])


def write(db_path, shelf_path):
    with dbm.ndbm.open(db_path, "c", 0o640) as db:
        db[b"alpha"] = b"1"
        db["beta"] = "two"
        db[b"gamma"] = bytes(range(256)) * 20
        for i in range(300):
            db[f"key{i:04d}"] = str(i * i)
        del db[b"gamma"]
    with shelve.open(shelf_path) as s:
        s["config"] = {"name": "demo", "retries": 3, "tags": ("a", "b")}
        s["rows"] = [[i, i * 0.5, str(i)] for i in range(50)]


mode = sys.argv[1] if len(sys.argv) > 1 else "all"
if mode == "write":
    write("exchange", "exchange-shelf")
    print(sorted(os.listdir(".")))
    sys.exit(0)
if mode == "read":
    show_db("exchange")
    show_shelf("exchange-shelf")
    sys.exit(0)

print("library:", dbm.ndbm.library)
os.mkdir("dbm")
os.chdir("dbm")
write("kv", "shelf")
for name in sorted(os.listdir(".")):
    st = os.stat(name)
    print(name, st.st_size, oct(st.st_mode & 0o777))
show_db("kv")
show_shelf("shelf")

# Mapping behaviour of an open database.
with dbm.ndbm.open("kv", "w") as db:
    print("setdefault:", db.setdefault(b"alpha", b"x"), db.setdefault(b"delta", b"4"))
    try:
        db[b"missing"]
    except KeyError as e:
        print("KeyError", e)
    try:
        del db[b"missing"]
    except KeyError as e:
        print("del KeyError", e)
    try:
        db[1] = b"x"
    except TypeError as e:
        print("TypeError", e)
    print("len after:", len(db))

# A read-only handle refuses writes and deletes, even of a missing key,
# with the library's error.
with dbm.open("kv", "r") as db:
    for what, change in (("write", lambda: db.__setitem__(b"alpha", b"2")),
                         ("delete", lambda: db.__delitem__(b"alpha")),
                         ("delete missing", lambda: db.__delitem__(b"missing"))):
        try:
            change()
        except (KeyError, dbm.ndbm.error) as e:
            print("read-only", what, "->", type(e).__module__, type(e).__name__, e)

# What dbm.open picks for a new file, and "n" truncating it.
with dbm.open("auto", "n") as db:
    db["k"] = "v"
print("auto:", dbm.whichdb("auto"), sorted(n for n in os.listdir(".") if n.startswith("auto")))
with dbm.open("auto", "n") as db:
    print("after n:", len(db))

# Errors opening: a missing file read-only, an unknown flag.
for path, flag in (("missing", "r"), ("kv", "q")):
    try:
        dbm.ndbm.open(path, flag)
    except Exception as e:
        print("open", path, flag, "->", type(e).__name__, e)
print("whichdb of a text file:", dbm.whichdb("../input.txt"))

for name in os.listdir("."):
    os.remove(name)
os.chdir("..")
os.rmdir("dbm")
