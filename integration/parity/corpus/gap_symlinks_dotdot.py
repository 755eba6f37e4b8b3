# A ".." after a symlink to a directory: the native guest's kernel climbs
# from the link's target ("deep/../new", deep -> dir/sub, is dir/new);
# under wazero it climbs from the link ("new" beside deep), since the WASI
# build's C library resolves a path's dots lexically before the host sees
# it, once each name before a ".." is a directory (RATIONALE.md, "The
# wazero guest's paths resolve as Linux resolves them"). The same library
# keeps the working directory as a string: after os.chdir through a link,
# os.getcwd() names the link's target natively and the link under wazero,
# and ".." from there climbs accordingly. Every other use of a link agrees
# (fs_symlinks.py).
import errno
import os

os.makedirs("/workspace/t/dir/sub")
os.chdir("/workspace/t")
os.symlink("dir/sub", "deep")
with open("dir/new", "w") as f:
    f.write("new")
for p in ("deep/../new", "deep/..", "deep/../sub"):
    try:
        print(p, sorted(os.listdir(p)) if os.path.isdir(p) else open(p).read())
    except OSError as e:
        print(p, type(e).__name__, errno.errorcode[e.errno])
os.chdir("deep")
print("getcwd", os.getcwd(), sorted(os.listdir(".")), os.path.exists("../new"))
