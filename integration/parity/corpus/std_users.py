# Users and groups as both backends answer them: the native guest's are
# its generated /etc/passwd and /etc/group (root, the guest's sandbox user
# 1000, nobody); under wazero, WASI has no user database and the WASI
# build's pwd and grp modules (python/wasi/stdlib) answer the same. What
# reads them: tarfile's member names, pathlib's owner() and group(),
# os.path.expanduser("~user").
import grp
import io
import os
import pathlib
import pickle
import pwd
import tarfile

print(pwd.getpwall())
print(grp.getgrall())
print(pwd.getpwnam("sandbox"), pwd.getpwuid(65534).pw_name, grp.getgrgid(1000), grp.getgrnam("nogroup").gr_gid)
p = pwd.getpwuid(0)
print(type(p).__name__, type(p).__module__, isinstance(p, tuple), len(p), p[0], p.pw_dir, pwd.struct_passwd.n_fields)
print(pickle.loads(pickle.dumps(p)) == p, pwd.struct_passwd(tuple(p)) == p)
match grp.getgrgid(0):
    case grp.struct_group(name, _, gid, members):
        print("match", name, gid, members)
for label, call in [
    ("uid 12345", lambda: pwd.getpwuid(12345)),
    ("uid -1", lambda: pwd.getpwuid(-1)),
    ("uid 2**40", lambda: pwd.getpwuid(2**40)),
    ("uid float", lambda: pwd.getpwuid(1.5)),
    ("name missing", lambda: pwd.getpwnam("nosuch")),
    ("name int", lambda: pwd.getpwnam(5)),
    ("name NUL", lambda: pwd.getpwnam("a\0b")),
    ("gid 12345", lambda: grp.getgrgid(12345)),
    ("gid -2", lambda: grp.getgrgid(-2)),
    ("gid str", lambda: grp.getgrgid("0")),
    ("group missing", lambda: grp.getgrnam("nosuch")),
    ("group keyword", lambda: grp.getgrnam(name="root").gr_gid),
    ("getpwall(1)", lambda: pwd.getpwall(1)),
    ("set a field", lambda: setattr(p, "pw_name", "x")),
]:
    try:
        print(label, call())
    except Exception as e:
        print(label, type(e).__name__, e)

mine = pathlib.Path("owned.txt")
mine.write_text("mine\n")
for path in (mine, pathlib.Path("/usr/lib/python3.11/os.py"), pathlib.Path("/tmp")):
    print(path, path.owner(), path.group())
print(os.path.expanduser("~sandbox"), os.path.expanduser("~root"), os.path.expanduser("~nosuch"))
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w") as tf:
    tf.add("owned.txt")
buf.seek(0)
with tarfile.open(fileobj=buf) as tf:
    m = tf.getmember("owned.txt")
    print("tar member", m.uname, m.gname, m.uid, m.gid, oct(m.mode))
os.remove("owned.txt")
# The WASI build's os keeps no helper or constant of its own patches
# (wasi-os-ids.patch, wasi-kill.patch) among its names: its private names
# are the native module's, less _spawnvef, which only a system with fork
# defines.
print("os private names", sorted(n for n in dir(os) if n.startswith("_") and not n.startswith("__") and n != "_spawnvef"))
