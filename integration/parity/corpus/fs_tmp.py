# /tmp is the run's own on both backends: writable, where tempfile puts its
# files, apart from the workspace (never exported), empty at the start.
import os
import shutil
import tempfile

print("gettempdir:", tempfile.gettempdir())
print("/tmp at the start:", os.listdir("/tmp"))
with open("/tmp/probe", "w") as f:
    f.write("x" * 1000)
print("/tmp/probe:", os.path.getsize("/tmp/probe"))
with tempfile.NamedTemporaryFile("w+", suffix=".txt") as f:
    f.write("named")
    f.seek(0)
    print("NamedTemporaryFile:", os.path.dirname(f.name), f.read())
with tempfile.TemporaryDirectory() as d:
    os.makedirs(os.path.join(d, "a", "b"))
    with open(os.path.join(d, "a", "b", "c.txt"), "w") as f:
        f.write("deep")
    shutil.copytree(os.path.join(d, "a"), "/tmp/copy")
    print("TemporaryDirectory:", os.path.dirname(d), sorted(os.listdir(d)))
print("copied:", open("/tmp/copy/b/c.txt").read())
shutil.rmtree("/tmp/copy")
fd, path = tempfile.mkstemp(prefix="run-")
os.write(fd, b"mkstemp")
os.close(fd)
os.rename(path, "/tmp/renamed")
print("renamed:", open("/tmp/renamed").read())
with tempfile.TemporaryFile(dir=".") as f:
    f.write(b"in the workspace")
    f.seek(0)
    print("TemporaryFile in the workspace:", f.read())
print("/tmp at the end:", sorted(os.listdir("/tmp")))
print("workspace:", sorted(os.listdir(".")))
# Listed without sorting, in the order of the filesystem (a tmpfs on both).
os.mkdir("/tmp/order")
for name in ["zeta", "alpha", "mid", "b2", "a1", "Q", "x.txt", "y.csv"]:
    open(os.path.join("/tmp/order", name), "w").close()
os.remove("/tmp/order/mid")
open("/tmp/order/new", "w").close()
print("unsorted:", os.listdir("/tmp/order"), [e.name for e in os.scandir("/tmp/order")])
