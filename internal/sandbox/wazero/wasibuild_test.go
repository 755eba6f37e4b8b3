package wazero

import (
	"archive/zip"
	"bytes"
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/tetratelabs/wazero"
)

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

// An exact result at decimal.MAX_PREC (425,000,000 digits on wasm32) comes
// from libmpdec's small-precision attempt first
// (patches/python3.11/wasi-mpdec-exact-first.patch), as on x86-64, where the
// full precision's allocation fails at once: without it, the guest's memory
// grew to 374 MiB for Decimal(4).sqrt(), and the run took seconds. With it
// the run needs no more memory than an empty one (40 MiB, 32 of them the C
// stack), give or take a few MiB of heap. The parity
// script std_decimal_precision.py holds the cases that must still take the
// full computation.
func TestDecimalExactAtMaxPrecision(t *testing.T) {
	out := run(t, `import decimal as D
ctx = D.Context(prec=D.MAX_PREC, Emin=D.MIN_EMIN, Emax=D.MAX_EMAX)
with D.localcontext(ctx) as c:
    print(D.Decimal(4).sqrt(), D.Decimal("40E9").sqrt(), D.Decimal(4) / 2, D.Decimal(400) ** -1,
          D.Decimal("1.21").sqrt(), D.Decimal(1) / 8, D.Decimal("7E+30") / D.Decimal("2.5E-3"))
    print("flags", [k.__name__ for k, v in c.flags.items() if v])
`, runOpts{})
	if out.Status != sandbox.StatusOK {
		t.Fatalf("status %s exit %d stderr %s", out.Status, out.ExitCode, out.Stderr)
	}
	wantLines(t, strings.Split(strings.TrimRight(string(out.Stdout), "\n"), "\n"),
		"2 2.0E+5 2 0.0025 1.1 0.125 2.8E+33", "flags []")
	empty := run(t, "pass\n", runOpts{})
	if out.Usage.PeakMemoryBytes > empty.Usage.PeakMemoryBytes+16<<20 {
		t.Errorf("peak memory %d MiB, an empty run's %d MiB: an exact result was computed to the full precision",
			out.Usage.PeakMemoryBytes>>20, empty.Usage.PeakMemoryBytes>>20)
	}
}

// The C library's memory functions (python/wasi/_apysup_string.c) answer
// as musl's did:
// comparisons against Python's own of the same values as lists of ints
// (no memcmp), at every length to 40 and every position, with bytes on both
// sides of 0x80; overlapping moves both ways against list slicing; copies
// and fills of every length around the short ones' word loops; and
// searches for a byte from either end (memchr, memrchr) from every start
// offset, so that each alignment of the first sixteen-byte load is met.
func TestMemoryFunctions(t *testing.T) {
	wantLines(t, guestLines(t, `import random
rng = random.Random(17)
bad = 0
for n in range(41):
    for pos in range(n):
        a = bytes(rng.randrange(256) for _ in range(n))
        for v in (0, 0x7F, 0x80, 0xFF, rng.randrange(256)):
            b = a[:pos] + bytes([v]) + a[pos + 1:]
            for x, y in ((a, b), (b, a), (a, a[:pos]), (a[:pos], b)):
                if (x < y, x == y, x > y) != (list(x) < list(y), list(x) == list(y), list(x) > list(y)):
                    bad += 1
print("comparisons wrong", bad)
bad = 0
for n in range(1, 200, 7):
    for shift in range(1, n, 5):
        ref = list(range(n))
        buf = bytearray(ref)
        buf[shift:] = buf[:-shift]
        ref[shift:] = ref[:-shift]
        bad += list(buf) != ref
        buf[:-shift] = buf[shift:]
        ref[:-shift] = ref[shift:]
        bad += list(buf) != ref
print("moves wrong", bad)
print("fill", bytearray(100003).count(0), (b"\x07" * 9999).count(7))
bad = 0
for n in range(70):
    bad += bytearray(n) != bytes([0] * n) or b"\xfe" * n != bytes([254] * n)
    src = bytes(range(n))
    bad += bytes(bytearray(src)) != src or src[1:] + src[:1] != bytes(list(src[1:]) + list(src[:1]))
print("short copies and fills wrong", bad)
bad = 0
for n in range(1, 80):
    data = bytes(rng.choice(b"ab\x80\xff") for _ in range(n))
    for ch in b"ab\x80\xff":
        at = [i for i in range(n) if data[i] == ch]
        for start in range(min(n, 20)):
            after = [i for i in at if i >= start]
            bad += data.find(bytes([ch]), start) != (after[0] if after else -1)
            bad += data.rfind(bytes([ch]), start) != (after[-1] if after else -1)
            bad += data.decode("latin-1").find(chr(ch), start) != (after[0] if after else -1)
print("searches wrong", bad)
`), "comparisons wrong 0", "moves wrong 0", "fill 100003 9999", "short copies and fills wrong 0", "searches wrong 0")
}

// buildFile is the path of one of the build's files (the build of the
// current inputs, which the test needs).
func buildFile(t *testing.T, name string) string {
	t.Helper()
	interpreter(t)
	build, err := Locate("")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(build.Dir, name)
}

// python.wasm's memory functions use WebAssembly's bulk memory operations
// and SIMD (build.sh compiles _apysup_string.c with -mbulk-memory and
// -msimd128): its target_features section says so, as wazero decodes it.
func TestBuildUsesBulkMemoryAndSIMD(t *testing.T) {
	wasm, err := os.ReadFile(buildFile(t, wasmFile))
	if err != nil {
		t.Fatal(err)
	}
	root, err := DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	cache, err := wazero.NewCompilationCacheWithDir(filepath.Join(root, "apysup", "wazero")) // the test binary's Load filled it
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(cache).WithCustomSections(true))
	defer rt.Close(ctx)
	compiled, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	var features []byte
	for _, sec := range compiled.CustomSections() {
		if sec.Name() == "target_features" {
			features = sec.Data()
		}
	}
	if features == nil {
		t.Fatal("python.wasm has no target_features section")
	}
	for _, f := range []string{"bulk-memory", "simd128"} {
		if !bytes.Contains(features, []byte(f)) {
			t.Errorf("python.wasm does not use %s: target_features %q", f, features)
		}
	}
}

// The build that ships is the profile-guided one (build.sh's last stage),
// not the instrumented one that trained it: its sysconfig data names the
// profile it was compiled with, and ThinLTO, and python.wasm carries no
// profile runtime (whose messages would be in its data, and which would
// write a profile into every guest's /workspace at its exit).
func TestBuildIsProfileGuided(t *testing.T) {
	wasm, err := os.ReadFile(buildFile(t, wasmFile))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(wasm, []byte("LLVM Profile")) || bytes.Contains(wasm, []byte("python.profraw")) {
		t.Error("python.wasm is the instrumented build: it holds the profile runtime")
	}
	zr, err := zip.OpenReader(buildFile(t, stdlibFile))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	data, err := fs.ReadFile(zr, "_sysconfigdata__wasi_wasm32-wasi.py")
	if err != nil {
		t.Fatal(err)
	}
	// build.sh's flags, with its work directory written as /build (configure's
	// own PGO_PROF_*_FLAG name other files).
	if !bytes.Contains(data, []byte("-fprofile-instr-use=/build/pgo/python.profdata")) ||
		bytes.Contains(data, []byte("-fprofile-instr-generate=/workspace/python.profraw")) {
		t.Errorf("the sysconfig data does not name a profile-guided build: %s", firstLine(data, "'CONFIGURE_CFLAGS'"))
	}
	// The optimised stage is link-time optimised too (build.sh, ThinLTO; the
	// sysconfig module wraps its long strings, so the flag stands alone).
	if !bytes.Contains(data, []byte("-flto=thin")) {
		t.Errorf("the sysconfig data does not name a link-time optimised build: %s", firstLine(data, "'CONFIGURE_CFLAGS'"))
	}
}

func firstLine(data []byte, prefix string) string {
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, prefix) {
			return line
		}
	}
	return "(no " + prefix + ")"
}

// The stdlib zip holds what the native guest's /usr/lib/python3.11 holds
// (the host's, of the revision the build pins, which Load checks): every
// module and every data file beside them (lib2to3 reads its grammar,
// pydoc its style sheet), less the test suites and GUI toolkits both
// leave aside, and nothing the host lacks.
func TestStdlibLaidOutAsHost(t *testing.T) {
	zr, err := zip.OpenReader(buildFile(t, stdlibFile))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	inZip := map[string]bool{}
	for _, f := range zr.File {
		if path.Base(path.Dir(f.Name)) != "__pycache__" {
			inZip[f.Name] = true
		}
	}
	// Left aside on both sides: the native guest sees them, the WASI
	// guest does not (docs/parity.md, wasi-missing-modules).
	skipped := func(rel string) bool {
		for _, part := range strings.Split(rel, "/") {
			switch {
			case part == "__pycache__", part == "test", part == "tests", part == "idle_test", part == "idlelib",
				part == "tkinter", part == "turtledemo", part == "site-packages", part == "dist-packages",
				part == "lib-dynload", strings.HasPrefix(part, "config-3.11-"):
				return true
			}
		}
		return false
	}
	hostOnly := map[string]string{
		"sitecustomize.py":   "Debian's link into /etc/python3.11, which the guest's /etc lacks on both backends",
		"EXTERNALLY-MANAGED": "Debian's mark for pip, which neither guest can run",
		"turtle.py":          "a Tk GUI",
	}
	// The WASI build's Python modules where native CPython has C modules
	// (python/wasi/stdlib): natively pwd is built in and grp a shared
	// object of lib-dynload.
	wasiOnly := map[string]string{
		"pwd.py":               "the native guest's pwd, in Python",
		"grp.py":               "the native guest's grp, in Python",
		"_apysup_structseq.py": "struct sequences for pwd and grp",
	}
	const lib = "/usr/lib/python3.11"
	onHost := map[string]bool{}
	err = filepath.WalkDir(lib, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(lib, p)
		if d.IsDir() {
			if rel != "." && skipped(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(rel, "_sysconfigdata_") || hostOnly[rel] != "" {
			return nil
		}
		onHost[rel] = true
		if !inZip[rel] {
			t.Errorf("%s/%s is not in the WASI stdlib", lib, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name := range inZip {
		if onHost[name] || wasiOnly[name] != "" || strings.HasPrefix(name, "_sysconfigdata__wasi_") || strings.HasPrefix(name, "_sysconfigdata__wasm32-wasi") {
			continue
		}
		// lib2to3 and distutils are Debian packages of their own
		// (python3-lib2to3, python3-distutils); a host without them
		// lacks the whole directory natively.
		if top, _, _ := strings.Cut(name, "/"); top == "lib2to3" || top == "distutils" {
			if _, err := os.Stat(filepath.Join(lib, top)); err != nil {
				continue
			}
		}
		t.Errorf("%s is in the WASI stdlib, not in %s", name, lib)
	}
	if len(onHost) < 600 {
		t.Fatalf("%d files in %s: not the stdlib", len(onHost), lib)
	}
}

// stat answers permission bits, owners and devices as the native guest's
// kernel does (nativeview.go, python/wasi/_apysup_stat.c), files and
// directories are created with the mode asked for, chmod changes it
// (chmod.go) and open and access follow it: the values a native run prints
// for the same paths (fs_stat_modes.py and fs_file_modes.py in the parity
// corpus compare the two backends).
func TestStatAsNative(t *testing.T) {
	wantLines(t, guestLines(t, `import os, zipfile
os.mkdir("d")
open("d/f", "w").close()
for p in ("/tmp", "/workspace", "/run/apysup/out", "d", "d/f", "/dev/null", "/usr/lib/python3.11/os.py", "/"):
    st = os.stat(p)
    print(p, oct(st.st_mode), st.st_uid, st.st_gid)
with open("d/f") as f:
    print("fstat", oct(os.fstat(f.fileno()).st_mode), os.fstat(f.fileno()).st_uid)
print("mounts", os.path.ismount("/workspace"), os.path.ismount("/usr/lib"), os.path.ismount("d"))
with zipfile.ZipFile("z.zip", "w") as z:
    z.write("d/f")
print("zip", oct(zipfile.ZipFile("z.zip").getinfo("d/f").external_attr >> 16))
import tempfile
fd, name = tempfile.mkstemp(dir=".")
os.close(fd)
print("created", oct(os.stat(name).st_mode), oct(os.stat(tempfile.mkdtemp(dir=".")).st_mode))
os.mkdir("ro", 0o555)
os.close(os.open("g", os.O_CREAT | os.O_WRONLY, 0o640))
print("modes", oct(os.stat("ro").st_mode), oct(os.stat("g").st_mode))
os.chmod("g", 0o200)
try:
    open("g").read()
except PermissionError as e:
    print("chmod", oct(os.stat("g").st_mode), e.strerror, os.access("g", os.W_OK), os.access("g", os.R_OK))
`), "/tmp 0o41777 0 0", "/workspace 0o40755 1000 1000", "/run/apysup/out 0o40700 1000 1000",
		"d 0o40755 1000 1000", "d/f 0o100644 1000 1000", "/dev/null 0o20666 65534 65534",
		"/usr/lib/python3.11/os.py 0o100644 65534 65534", "/ 0o40755 65534 65534",
		"fstat 0o100644 1000", "mounts True False False", "zip 0o100644",
		"created 0o100600 0o40700", "modes 0o40555 0o100640", "chmod 0o100200 Permission denied True False")
}

// The block size, blocks and device numbers stat answers are the native
// guest's (_apysup_stat.c): 4096-byte blocks everywhere, a file's size in
// whole pages, a tmpfs directory nothing and one on the read-only root,
// and /dev/zero the host's (1, 5).
func TestStatBlocksAsNative(t *testing.T) {
	wantLines(t, guestLines(t, `import os
os.mkdir("d")
with open("f", "wb") as f:
    f.write(b"x" * 5000)
for p in ("f", "d", "/usr/lib/python3.11", "/dev/zero"):
    st = os.stat(p)
    print(p, st.st_blksize, st.st_blocks, st.st_rdev)
print("fd", os.fstat(1).st_blksize, open("f", "rb").raw._blksize)
print("dev", os.major(261), os.minor(261), os.makedev(1, 5))
`), "f 4096 16 0", "d 4096 0 0", "/usr/lib/python3.11 4096 8 0", "/dev/zero 4096 0 261",
		"fd 4096 4096", "dev 1 5 261")
}
