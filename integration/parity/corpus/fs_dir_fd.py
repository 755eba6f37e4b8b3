# Directories through a descriptor, on both backends: listdir and scandir
# of a descriptor, os.fwalk, shutil.rmtree (which takes its descriptor-based
# path when scandir takes descriptors), and os.sendfile between files.
# WASI preview 1 has no dup, with which CPython reopens the directory
# (the WASI build opens it again through the descriptor instead:
# python/wasi/patches/python3.11/wasi-files.patch), and no sendfile (the
# WASI build reads and writes: python/wasi/_apysup_files.c).
import errno
import os
import shutil
import sys


def attempt(label, call):
    try:
        print(label, call())
    except OSError as e:
        # A descriptor's number differs between the backends.
        print(label, type(e).__name__, errno.errorcode[e.errno], "fd" if isinstance(e.filename, int) else e.filename)


os.makedirs("tree/a/b")
os.makedirs("tree/c")
for name in ("tree/top.txt", "tree/a/one.txt", "tree/a/b/two.txt"):
    with open(name, "w") as f:
        f.write(name)
d = os.open("tree", os.O_RDONLY)
attempt("listdir", lambda: sorted(os.listdir(d)))
attempt("scandir", lambda: sorted((e.name, e.is_dir(), e.is_file(), e.is_file() and e.stat().st_size) for e in os.scandir(d)))
attempt("again", lambda: sorted(os.listdir(d)))
with os.scandir(d) as it:
    first = next(it).name
print("scandir closed early", first in os.listdir(d))
os.close(d)
f = os.open("tree/top.txt", os.O_RDONLY)
attempt("listdir of a file", lambda: os.listdir(f))
attempt("scandir of a file", lambda: list(os.scandir(f)))
os.close(f)
attempt("listdir closed", lambda: os.listdir(999))
print("supports_fd", sorted(n for n in ("listdir", "scandir") if getattr(os, n) in os.supports_fd))
print("fwalk", hasattr(os, "fwalk"))
for top, dirs, files, fd in os.fwalk("tree"):
    print(" ", top, sorted(dirs), sorted(files), os.stat(fd).st_nlink > 0)
d = os.open(".", os.O_RDONLY)
print("fwalk dir_fd", [(top, sorted(files)) for top, _, files, _ in os.fwalk("tree/a", dir_fd=d)])
os.close(d)
print("rmtree avoids symlink attacks", shutil.rmtree.avoids_symlink_attacks)
shutil.rmtree("tree/a")
print("removed", sorted(os.listdir("tree")))
attempt("rmtree missing", lambda: shutil.rmtree("tree/missing"))
shutil.rmtree("tree")
print("gone", os.path.exists("tree"))

with open("src", "wb") as f:
    f.write(bytes(range(256)) * 1000)
src = os.open("src", os.O_RDONLY)
dst = os.open("dst", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
attempt("sendfile at 5", lambda: (os.sendfile(dst, src, 5, 20), os.lseek(src, 0, os.SEEK_CUR)))
attempt("sendfile at the offset", lambda: (os.sendfile(dst, src, None, 30), os.lseek(src, 0, os.SEEK_CUR)))
attempt("sendfile all", lambda: os.sendfile(dst, src, 0, 10**6))
attempt("sendfile past the end", lambda: os.sendfile(dst, src, 10**6, 10))
attempt("sendfile none", lambda: os.sendfile(dst, src, 0, 0))
attempt("sendfile negative", lambda: os.sendfile(dst, src, -1, 10))
attempt("sendfile closed out", lambda: os.sendfile(999, src, 0, 10))
attempt("sendfile closed in", lambda: os.sendfile(dst, 999, 0, 10))
d = os.open(".", os.O_RDONLY)
attempt("sendfile from a directory", lambda: os.sendfile(dst, d, 0, 10))
os.close(d)
ro = os.open("src", os.O_RDONLY)
attempt("sendfile to a read-only", lambda: os.sendfile(ro, src, 0, 10))
os.close(ro)
app = os.open("appended", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
attempt("sendfile to an append-only", lambda: os.sendfile(app, src, 0, 10))
os.close(app)
wo = os.open("dst", os.O_WRONLY)
attempt("sendfile from a write-only", lambda: os.sendfile(dst, wo, 0, 10))
os.close(wo)
os.close(dst)
with open("dst", "rb") as f:
    data = f.read()
print("copied", len(data), data[:8].hex(), data[20:28].hex(), data[50:58].hex())
sys.stdout.flush()
attempt("sendfile to stdout", lambda: os.sendfile(1, src, 65, 26))
os.close(src)
# shutil copies between files with sendfile on Linux, and so under WASI.
calls = []
real_sendfile = os.sendfile
os.sendfile = lambda *args: calls.append(args[3]) or real_sendfile(*args)
shutil.copyfile("src", "copy")
os.sendfile = real_sendfile
with open("copy", "rb") as a, open("src", "rb") as b:
    print("shutil.copyfile", a.read() == b.read(), "through sendfile", len(calls) > 0)

# A directory opened at a mount's own root, and paths relative to it:
# os.listdir(fd) reopens "." through it, os.fwalk and dir_fd calls go
# through it (all ENOENT under wazero on the read-only mounts before).
for d in ("/", "/etc", "/dev", "/opt/apysup", "/run/apysup/job", "/proc", "/tmp", "/workspace", "/usr/lib"):
    fd = os.open(d, os.O_RDONLY)
    try:
        print(d, sorted(os.listdir(fd)) == sorted(os.listdir(d)),
              os.stat(".", dir_fd=fd).st_ino == os.stat(d).st_ino,
              sorted(os.scandir(fd), key=lambda e: e.name) and True)
    except OSError as e:
        print(d, "!", e.errno, e.strerror)
    os.close(fd)
walk = os.fwalk("/etc")
top, dirs, files, topfd = next(walk)
print("fwalk /etc", top, "passwd" in files, "group" in files, os.stat("passwd", dir_fd=topfd).st_size > 0)
walk.close()
