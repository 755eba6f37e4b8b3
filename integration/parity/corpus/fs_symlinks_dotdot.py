# A ".." after a symlink climbs from the link's target, as the kernel
# walks a path: "deep/../new", deep -> dir/sub, is dir/new. Under wazero
# the WASI build's C library resolves a path's dots before the host sees
# it, and reads each name that a ".." follows as a link first
# (python/wasi/_apysup_paths.c, physical). os.chdir through a link makes
# os.getcwd() name the target, and ".." climb from there.
import errno
import os

os.makedirs("/workspace/t/dir/sub/inner")
os.makedirs("/workspace/t/other")
os.chdir("/workspace/t")
os.symlink("dir/sub", "deep")            # relative, two levels
os.symlink("/workspace/t/dir/sub", "abs")  # absolute
os.symlink("deep", "chain")              # a link to a link
os.symlink("../other", "dir/up")         # a target with its own ".."
os.symlink("dir/new", "flink")           # a link to a file
os.symlink("loop", "loop")               # a link to itself
os.symlink("/tmp", "tmplink")            # to another mount
os.symlink("missing/x", "dangling")
with open("dir/new", "w") as f:
    f.write("new")
with open("other/o", "w") as f:
    f.write("o")
with open("/tmp/tfile", "w") as f:
    f.write("t")


def show(p):
    try:
        if os.path.isdir(p):
            return sorted(os.listdir(p))
        with open(p) as f:
            return f.read()
    except OSError as e:
        return "%s %s" % (type(e).__name__, errno.errorcode[e.errno])


for p in (
    "deep/../new", "deep/..", "deep/../sub", "abs/../new", "chain/../new",
    "chain/inner/../..", "deep/./../new", "./deep/../new", "deep/inner/../../new",
    "dir/up/../dir/new", "dir/up/o", "dir/up/../other/o",
    "flink/..", "flink/../new", "loop/..", "dangling/..", "missing/..",
    "tmplink/../workspace/t/dir/new", "tmplink/../tmp/tfile",
    "/workspace/t/deep/../new", "deep/../",
):
    print(p, show(p))

# stat, open for writing, mkdir, rename and unlink through a ".." after a link
print("stat", os.stat("deep/../new").st_size)
with open("deep/../made", "w") as f:
    f.write("m")
print("made in dir", sorted(os.listdir("dir")))
os.mkdir("deep/../newdir")
os.rename("deep/../made", "deep/../newdir/moved")
print("renamed", sorted(os.listdir("dir/newdir")))
os.unlink("deep/../newdir/moved")
os.rmdir("deep/../newdir")
print("after", sorted(os.listdir("dir")))

# the working directory, through links
os.chdir("deep")
print("getcwd", os.getcwd(), sorted(os.listdir(".")), os.path.exists("../new"))
os.chdir("/workspace/t/chain/inner")
print("getcwd", os.getcwd())
os.chdir("../..")
print("getcwd", os.getcwd())
os.chdir("/workspace/t")
os.chdir("abs/")
print("getcwd", os.getcwd())
os.chdir("/workspace/t/tmplink")
print("getcwd", os.getcwd(), "tfile" in os.listdir("."))
os.chdir("/workspace/t")
for p in ("flink", "loop", "dangling", "flink/.."):
    try:
        os.chdir(p)
        print("chdir", p, os.getcwd())
    except OSError as e:
        print("chdir", p, type(e).__name__, errno.errorcode[e.errno])
print("realpath", os.path.realpath("chain/inner/.."))
