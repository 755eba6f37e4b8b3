# Symlinks on the writable mounts, on both backends: made with os.symlink
# and pathlib, read back, followed (relative, absolute, climbing out of the
# mount and back, chained, to directories, dangling ones an open creates
# the target of), and not followed where the call says so (lstat, unlink,
# rename, link, readlink, O_NOFOLLOW, os.walk, shutil's copies and rmtree,
# tar).
# And links that lead to another mount: to /etc, /tmp, the stdlib, the
# root, from /tmp into the workspace, with the stat of the file they lead
# to. Under wazero the links are resolved inside the guest's mounts, never
# by the host's kernel (internal/sandbox/wazero/linkdir.go); a ".." after
# a link is fs_symlinks_dotdot.py.
import errno
import io
import os
import pathlib
import shutil
import stat
import tarfile


def attempt(label, call):
    try:
        print(label, call())
    except OSError as e:
        print(label, type(e).__name__, errno.errorcode.get(e.errno, e.errno), e.strerror if e.errno is None else "")


def read(p):
    with open(p) as f:
        return f.read()


os.chdir("/workspace")
with open("a.txt", "w") as f:
    f.write("hello")
os.makedirs("dir/sub")
links = {
    "rel": "a.txt", "abs": "/workspace/a.txt", "back": "../workspace/a.txt", "chain": "rel",
    "dirlink": "dir", "dirabs": "/workspace/dir/", "deep": "dir/sub", "dangling": "made.txt",
    "loop": "loop", "ping": "pong", "pong": "ping", "empty-dir": "dir/sub/none",
}
for name, target in links.items():
    os.symlink(target, name)
for name in ("rel", "abs", "back", "chain"):
    attempt("read " + name, lambda: read(name))
    attempt("readlink " + name, lambda: os.readlink(name))
    attempt("realpath " + name, lambda: os.path.realpath(name))
with open("dirlink/new", "w") as f:
    f.write("new")
os.mkdir("dirabs/made-dir")
attempt("listdir dir", lambda: sorted(os.listdir("dir")))
attempt("listdir dirlink", lambda: sorted(os.listdir("dirlink")))
attempt("create through dangling", lambda: open("dangling", "w").write("made"))
attempt("made.txt", lambda: read("made.txt"))
attempt("O_EXCL through a link", lambda: os.open("rel", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
attempt("O_NOFOLLOW", lambda: os.open("rel", os.O_RDONLY | os.O_NOFOLLOW))
os.symlink("never.txt", "dangling-x")
attempt("O_EXCL of a dangling link", lambda: open("dangling-x", "x"))
print("its target", os.path.lexists("never.txt"))
for name in ("loop", "ping", "loop/x"):
    attempt("stat " + name, lambda: os.stat(name).st_size)
attempt("empty-dir", lambda: os.stat("empty-dir"))
st, lst = os.stat("chain"), os.lstat("chain")
print("stat chain", stat.S_ISREG(st.st_mode), st.st_size, "lstat chain", stat.S_ISLNK(lst.st_mode), oct(stat.S_IMODE(lst.st_mode)), lst.st_size)
print("samefile", os.path.samefile("abs", "a.txt"), "islink", os.path.islink("abs"), os.path.islink("a.txt"))
print("exists", os.path.exists("loop"), os.path.lexists("loop"), os.path.exists("dangling"))
os.chmod("rel", 0o600)
print("chmod through", oct(stat.S_IMODE(os.stat("a.txt").st_mode)))
os.utime("rel", (1000000000, 1000000000))
print("utime through", os.stat("a.txt").st_mtime, os.lstat("rel").st_mtime != 1000000000)
os.utime("rel", (5, 5), follow_symlinks=False)
print("utime of the link", os.lstat("rel").st_mtime, os.stat("a.txt").st_mtime)
with os.scandir(".") as it:
    print("scandir", sorted((e.name, e.is_symlink(), e.is_dir(), e.is_file()) for e in it if e.name not in ("loop", "ping", "pong")))
print("walk", sorted((root, sorted(dirs), sorted(files)) for root, dirs, files in os.walk(".")))
print("walk followlinks", sorted(root for root, _, _ in os.walk(".", followlinks=True)))

p = pathlib.Path("pl")
p.symlink_to("a.txt")
print("pathlib", p.is_symlink(), p.resolve(), p.read_text(), p.readlink(), p.exists(), pathlib.Path("loop").is_symlink())
shutil.copytree("dir", "copy-links", symlinks=True)
os.symlink("new", "dir/inner")
shutil.copytree("dir", "copy-follow")
shutil.copytree("dir", "copy-keep", symlinks=True)
print("copytree", os.path.islink("copy-follow/inner"), os.path.islink("copy-keep/inner"), read("copy-follow/inner"))
shutil.copy("rel", "copied")
print("copy", os.path.islink("copied"), read("copied"))
shutil.rmtree("copy-keep")
print("rmtree kept the target", os.path.exists("dir/new"))
attempt("rmtree of a link", lambda: shutil.rmtree("dirlink"))
attempt("rmdir of a link", lambda: os.rmdir("dirlink"))
os.link("abs", "hard-of-abs")
print("hard link of a link", os.path.islink("hard-of-abs"), os.readlink("hard-of-abs"), os.lstat("abs").st_nlink, read("hard-of-abs"))
os.rename("chain", "dir/chain")
attempt("moved relative link", lambda: read("dir/chain"))
os.unlink("rel")
print("unlink link", os.path.exists("rel"), os.path.exists("a.txt"))
attempt("symlink over a name", lambda: os.symlink("x", "abs"))
attempt("symlink to nothing", lambda: os.symlink("", "empty"))
attempt("symlink in the read-only root", lambda: os.symlink("x", "/usr/lib/x"))
attempt("symlink target too long", lambda: os.symlink("a" * 5000, "long"))
attempt("symlink target of 4095", lambda: (os.symlink("b" * 4095, "long"), len(os.readlink("long")), os.unlink("long"))[1])
attempt("readlink of a file", lambda: os.readlink("a.txt"))

buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w") as tf:
    for name in ("abs", "back", "a.txt"):
        tf.add(name)
buf.seek(0)
os.mkdir("ex")
with tarfile.open(fileobj=buf) as tf:
    print("tar", [(m.name, m.issym(), m.linkname) for m in tf.getmembers()])
    tf.extractall("ex")
print("extracted", os.readlink("ex/abs"), read("ex/abs"), os.path.islink("ex/back"))

os.symlink("t.txt", "/tmp/l")
with open("/tmp/l", "w") as f:
    f.write("tmp")
print("tmp", read("/tmp/t.txt"), os.readlink("/tmp/l"), sorted(os.listdir("/tmp")))
os.symlink("/tmp/t.txt", "/tmp/abs")
print("tmp abs", read("/tmp/abs"))
for target in ("/etc/hostname", "../etc/hostname", "/tmp/t.txt", "/tmp", "/", "/usr/lib/python3.11/os.py", "/root/.bashrc", "/run/apysup/out"):
    os.symlink(target, "out")
    attempt("out " + target, lambda: (os.path.isdir("out"), os.path.exists("out"), len(read("out")) > 0))
    if os.path.exists("out"):
        a, b = os.stat("out"), os.stat(target if target.startswith("/") else "/etc/hostname")
        print("  same stat", [getattr(a, f) == getattr(b, f) for f in ("st_dev", "st_ino", "st_mode", "st_uid", "st_gid", "st_size")])
    os.unlink("out")
os.symlink("/workspace/made-in-ws", "/tmp/to-workspace")
with open("/tmp/to-workspace", "w") as f:
    f.write("x")
print("made through /tmp", read("made-in-ws"), os.path.islink("/tmp/to-workspace"))
attempt("write through a link to /etc", lambda: os.symlink("/etc/hostname", "eh") or open("eh", "a").write("x"))
attempt("rename through a link to /tmp", lambda: os.symlink("/tmp", "tl") or os.rename("tl/t.txt", "moved.txt"))
print("left", sorted(os.listdir(".")))
for name in os.listdir("."):
    if os.path.islink(name) or os.path.isfile(name):
        os.unlink(name)
    else:
        shutil.rmtree(name)
