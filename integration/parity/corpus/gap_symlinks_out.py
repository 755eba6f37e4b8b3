# A symlink on a writable mount whose target leaves the mount (another
# mount, the read-only root, a path only the host has): the native guest's
# kernel resolves it in the sandbox's tree; under wazero it dangles (ENOENT)
# for everything that follows it, since the links are resolved inside the
# mount and never by the host's kernel (internal/sandbox/wazero/linkdir.go).
# Making, reading and removing the link agree. And a path that climbs out
# of a link to a directory ("deep/../new", deep -> dir/sub) climbs from the
# link's target natively, from the link under wazero, which cleans a
# guest's path before it resolves it.
import errno
import os

os.chdir("/workspace")
with open("/tmp/t.txt", "w") as f:
    f.write("tmp")
for target in ("/etc/hostname", "../etc/hostname", "/tmp/t.txt", "/tmp", "/", "/usr/lib/python3.11/os.py", "/root/.bashrc"):
    os.symlink(target, "out")
    print(target, os.readlink("out"), os.path.islink("out"), end=" ")
    try:
        with open("out") as f:
            print("read", len(f.read()) > 0)
    except OSError as e:
        print(type(e).__name__, errno.errorcode[e.errno])
    os.unlink("out")
os.symlink("/workspace/made", "/tmp/to-workspace")
try:
    with open("/tmp/to-workspace", "w") as f:
        f.write("x")
    print("made through /tmp", os.path.exists("made"))
except OSError as e:
    print("made through /tmp", type(e).__name__, errno.errorcode[e.errno])
os.makedirs("dir/sub")
os.symlink("dir/sub", "deep")
with open("dir/new", "w") as f:
    f.write("new")
try:
    with open("deep/../new") as f:
        print("deep/../new", f.read())
except OSError as e:
    print("deep/../new", type(e).__name__, errno.errorcode[e.errno])
