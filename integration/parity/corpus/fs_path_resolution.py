# Paths resolve as the kernel resolves them, on both backends: an empty
# path is missing, a name that "." or ".." follows must be a directory, ".."
# climbs across mounts, the working directory has no dots, a rename or link
# across mounts is EXDEV, chmod looks its path up. Under wazero, wasi-libc
# and wazero resolve lexically: python/wasi/_apysup_paths.c, the build's
# patches and the backend's file systems answer as Linux does.
import errno
import os


def attempt(name, fn, *args):
    try:
        result = fn(*args)
        print(name, "ok", "" if result is None else result)
    except OSError as e:
        print(name, type(e).__name__, errno.errorcode.get(e.errno))


os.chdir("/workspace")
with open("f", "w") as fh:
    fh.write("x")
os.makedirs("d/e")

for p in ("", "f/.", "f/..", "f/./x", "f/../f", "nope/..", "d/e/../..", "d/./e/.", "../workspace/f", "/tmp/../workspace/d", "/../../workspace/f", "..", "/.."):
    attempt(f"stat {p!r}", lambda p=p: "dir" if os.path.isdir(p) else ("file" if os.path.exists(p) else os.stat(p)))
    attempt(f"exists {p!r}", os.path.exists, p)
for p in ("", "f/..", "f/x", "f/x/y", "nope/x", "d/e/../n", "../workspace/m"):
    attempt(f"mkdir {p!r}", os.mkdir, p)
attempt("makedirs ''", os.makedirs, "", 0o777, True)
attempt("makedirs dirname", os.makedirs, os.path.dirname("out.txt"), 0o777, True)
for fn, args in ((open, ("",)), (open, ("", "w")), (open, ("f/..", "w")), (open, ("../workspace/g", "w")), (os.listdir, ("",)),
                 (os.unlink, ("",)), (os.rmdir, ("",)), (os.rename, ("", "z")), (os.rename, ("f", "")), (os.rename, ("f/..", "z")),
                 (os.access, ("", os.F_OK)), (os.chdir, ("",)), (os.chdir, ("f/..",)), (os.utime, ("",)), (os.unlink, ("f/.",)),
                 (os.chmod, ("", 0o644)), (os.chmod, ("nope", 0o644)), (os.chmod, ("f/..", 0o644)), (os.link, ("", "l")),
                 (os.rename, ("f", "/tmp/f")), (os.link, ("f", "/tmp/f")), (os.rename, ("/tmp/nope", "n")),
                 (os.get_terminal_size, ()), (os.get_terminal_size, (1,)), (os.get_terminal_size, (99,))):
    attempt(f"{fn.__name__} {args!r}", fn, *args)
print(sorted(os.listdir(".")))
for p in ("d/e/..", "../workspace/d/./e", "/tmp/..", "/workspace/d/e/../../d"):
    os.chdir(p)
    print("chdir", repr(p), os.getcwd())
    os.chdir("/workspace")
# The read-only mounts: the path's directory resolves before the mount
# refuses a change.
for fn, args in ((os.mkdir, ("/usr/lib/python3.11",)), (os.mkdir, ("/usr/lib/nope/x",)), (os.mkdir, ("/usr/lib/new",)),
                 (os.mkdir, ("/opt/apysup/apysup_runner.py/x",)), (os.rmdir, ("/usr/lib/nope/x",)), (os.rmdir, ("/usr/lib/python3.11",)),
                 (os.unlink, ("/usr/lib/nope/x",)), (os.unlink, ("/opt/apysup/apysup_runner.py",)), (os.unlink, ("/opt/apysup/nope",)),
                 (os.rename, ("/opt/apysup/apysup_runner.py", "/opt/apysup/r")), (os.rename, ("/usr/lib/nope/x", "/usr/lib/y")),
                 (os.utime, ("/usr/lib/nope",)), (os.utime, ("/opt/apysup/apysup_runner.py",)),
                 (os.chmod, ("/usr/lib/nope", 0o644)),
                 (os.rmdir, ("/workspace",)), (os.rmdir, ("/tmp",)), (os.rmdir, ("/run/apysup/out",)), (os.rmdir, ("/workspace/",))):
    attempt(f"{fn.__name__} {args!r}", fn, *args)
# A working directory removed under the script: getcwd (and what builds on
# it) and a name created in it are ENOENT.
os.mkdir("gone")
os.chdir("gone")
os.rmdir("../gone")
attempt("getcwd in a removed directory", os.getcwd)
attempt("abspath in a removed directory", os.path.abspath, "x")
attempt("create in a removed directory", open, "x", "w")
os.chdir("/workspace")
print("back", os.getcwd(), sorted(os.listdir(".")))
