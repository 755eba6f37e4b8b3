package wazero

import "testing"

// What the WASI build itself provides (python/wasi/build.sh): these need
// the build of the current inputs.

// os.utime(p) and Path.touch() set the current time, not the epoch
// (python/wasi/patches/python3.11/utime-now.patch); explicit times still
// land exactly.
func TestUtimeNow(t *testing.T) {
	wantLines(t, guestLines(t, `import os, pathlib, time
p = "t.txt"
open(p, "w").close()
for name, bump in (("os.utime", lambda: os.utime(p)), ("touch", lambda: pathlib.Path(p).touch()),
                   ("utime(fd)", lambda: os.utime(os.open(p, os.O_RDONLY)))):
    os.utime(p, ns=(5, 7))
    before = time.time()
    bump()
    st = os.stat(p)
    print(name, st.st_mtime >= before - 2 and st.st_atime >= before - 2)
os.utime(p, ns=(5, 7))
print("explicit", os.stat(p).st_atime_ns, os.stat(p).st_mtime_ns)
`), "os.utime True", "touch True", "utime(fd) True", "explicit 5 7")
}

// lzma and bz2 are built in (Debian's xz-utils and bzip2 sources), and
// CPython's test modules (_testcapi) as natively.
func TestCompressionModules(t *testing.T) {
	wantLines(t, guestLines(t, `import bz2, lzma, _testcapi
data = b"apysup " * 1000
for mod in (lzma, bz2):
    packed = mod.compress(data)
    print(mod.__name__, len(packed) < len(data), mod.decompress(packed) == data)
with lzma.open("x.xz", "wb", format=lzma.FORMAT_XZ, check=lzma.CHECK_SHA256) as f:
    f.write(data)
with lzma.open("x.xz") as f:
    print("xz file", f.read() == data)
with bz2.open("x.bz2", "wt") as f:
    f.write("text")
print("bz2 file", bz2.open("x.bz2", "rt").read())
print("_testcapi", _testcapi.INT_MAX)
`), "lzma True True", "bz2 True True", "xz file True", "bz2 file text", "_testcapi 2147483647")
}
