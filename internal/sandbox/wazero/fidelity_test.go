package wazero

import (
	"os"
	"strings"
	"testing"

	"github.com/apysup/apysup/internal/sandbox"
)

// guestLines runs script on the real guest and returns its stdout lines;
// the run must end ok.
func guestLines(t *testing.T, script string) []string {
	t.Helper()
	out := run(t, script, runOpts{})
	if out.Status != sandbox.StatusOK {
		t.Fatalf("status %s exit %d stderr %s", out.Status, out.ExitCode, out.Stderr)
	}
	return strings.Split(strings.TrimRight(string(out.Stdout), "\n"), "\n")
}

func wantLines(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("guest printed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A path outside every mount is missing (ENOENT), as natively, not a
// capability error: pathlib's exists() answers False instead of raising.
func TestPathOutsideMountsIsMissing(t *testing.T) {
	wantLines(t, guestLines(t, `import errno, os, pathlib
for p in ("/nonexistent/x", "/etc/shadow", "/usr/lib/nonexistent", "/run/nonexistent"):
    try:
        os.stat(p)
    except OSError as e:
        print(p, pathlib.Path(p).exists(), os.path.exists(p), type(e).__name__, errno.errorcode[e.errno])
print("/", pathlib.Path("/").is_dir(), "/usr", pathlib.Path("/usr").is_dir())
`), "/nonexistent/x False False FileNotFoundError ENOENT",
		"/etc/shadow False False FileNotFoundError ENOENT",
		"/usr/lib/nonexistent False False FileNotFoundError ENOENT",
		"/run/nonexistent False False FileNotFoundError ENOENT",
		"/ True /usr True")
}

// os.set_blocking on a regular file works and reads back, as natively
// (where O_NONBLOCK changes nothing for a regular file).
func TestSetBlockingOnFile(t *testing.T) {
	wantLines(t, guestLines(t, `import os
open("f", "w").write("data")
for path, flags in (("f", os.O_RDONLY), ("/usr/lib/python3.11/os.py", os.O_RDONLY), (".", os.O_RDONLY)):
    fd = os.open(path, flags)
    os.set_blocking(fd, False)
    a = os.get_blocking(fd)
    os.set_blocking(fd, True)
    print(path, a, os.get_blocking(fd))
fd = os.open("f", os.O_RDONLY)
os.set_blocking(fd, False)
print(os.read(fd, 10))
`), "f False True", "/usr/lib/python3.11/os.py False True", ". False True", "b'data'")
}

// The read-only mounts refuse a write at open(2), with the native guest's
// errno (a read-only bind mount of files the guest does not own), not at
// the first write (EBADF) as before.
func TestReadOnlyMountsRefuseWritesAtOpen(t *testing.T) {
	// The parity corpus's script (which native runs too), and reads still work.
	script, err := os.ReadFile("../../../integration/parity/corpus/fs_read_only.py")
	if err != nil {
		t.Fatal(err)
	}
	wantLines(t, guestLines(t, string(script)+`
print(len(open(sys.executable, "rb").read()), open("/opt/apysup/apysup_runner.py").read(0) == "")
`), "/usr/bin/python3.11 EROFS EACCES EACCES",
		"/opt/apysup/apysup_runner.py EROFS EACCES EACCES",
		"/usr/lib/python3.11/missing.py EROFS EROFS ENOENT",
		"/usr/lib/python3.11 EISDIR EISDIR EISDIR",
		"EROFS", "EROFS",
		"ENOTDIR", "ENOENT",
		"0 True")
}

// /dev holds the five character devices scripts open by name, behaving as
// natively (devfs.go): os.devnull works. (The links to the standard
// streams beside them: fs_dev_streams.py in the parity corpus.)
func TestDevices(t *testing.T) {
	wantLines(t, guestLines(t, `import os, stat
print(os.devnull, stat.S_ISCHR(os.stat("/dev/null").st_mode), sorted(os.listdir("/dev")))
with open(os.devnull, "w") as f:
    print(f.write("discarded"))
print(repr(open("/dev/null", "rb").read()), open("/dev/zero", "rb").read(4), open("/dev/full", "rb").read(2))
print(len(open("/dev/urandom", "rb").read(32)), len(set(open("/dev/random", "rb").read(64))) > 8)
try:
    with open("/dev/full", "wb", buffering=0) as f:
        f.write(b"x")
except OSError:
    print("full refused")
for f in (lambda: open("/dev/x", "w"), lambda: os.unlink("/dev/null"), lambda: os.mkdir("/dev/d"), lambda: os.rename("/dev/zero", "/dev/z")):
    try:
        f()
    except PermissionError:
        print("PermissionError")
print(open("/dev/null", "rb").seek(100), open("/dev/null", "ab").write(b"x"))
`), "/dev/null True ['full', 'null', 'random', 'stderr', 'stdin', 'stdout', 'urandom', 'zero']",
		"9",
		`b'' b'\x00\x00\x00\x00' b'\x00\x00'`,
		"32 True",
		"full refused",
		"PermissionError", "PermissionError", "PermissionError", "PermissionError",
		"0 1")
}
