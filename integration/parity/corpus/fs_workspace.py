import os
import pathlib
import shutil
import tempfile

ws = pathlib.Path("/workspace")
print(os.getcwd(), pathlib.Path.cwd(), pathlib.Path(".").resolve())
print(sorted(os.listdir("/workspace")), sorted(p.name for p in ws.iterdir()))
print(sorted(str(p.relative_to(ws)) for p in ws.rglob("*")))
print(ws.joinpath("input.txt").read_text().splitlines(), (ws / "sub" / "nested.txt").exists())
out = ws / "out"
out.mkdir()
(out / "a.txt").write_text("alpha\n")
(out / "b.bin").write_bytes(bytes(range(256)))
(out / "deep" / "er").mkdir(parents=True)
(out / "deep" / "er" / "c.json").write_text('{"c": 3}')
with open(out / "a.txt", "a") as f:
    f.write("beta\n")
os.rename(out / "a.txt", out / "ab.txt")
shutil.copyfile(ws / "input.txt", out / "copy.txt")
(ws / "sub" / "nested.txt").unlink()
os.rmdir(ws / "sub")
print(sorted(os.listdir(out)), (out / "ab.txt").read_text())
st = os.stat(out / "b.bin")
print(st.st_size, os.path.isdir(out), os.path.isfile(out / "b.bin"), os.path.getsize(out / "ab.txt"))
with tempfile.TemporaryDirectory(dir=".") as d:
    p = pathlib.Path(d, "t.txt")
    p.write_text("temp")
    print("tempdir in workspace:", p.read_text(), os.path.dirname(d) == os.getcwd())
print(sorted(os.listdir(".")))
print([(root, sorted(dirs), sorted(files)) for root, dirs, files in sorted(os.walk("out"))])
