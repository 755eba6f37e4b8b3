package wazero

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
)

// TestConfinedDirGoesThroughNoSymlink: no call follows a link on the host,
// whether it leads out or not; the guest may make links, and see, read
// and remove them.
func TestConfinedDirGoesThroughNoSymlink(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("host"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(root, outside)
	if err := os.Symlink(rel, filepath.Join(root, "sub", "out")); err != nil {
		t.Fatal(err)
	}
	d := newConfinedDir(root, 1<<20)
	for name, errno := range map[string]experimentalsys.Errno{
		"open through":   open(d, "sub/out/secret"),
		"open link":      open(d, "sub/out"),
		"stat through":   second(d.Stat("sub/out/secret")),
		"stat link":      second(d.Stat("sub/out")),
		"mkdir through":  d.Mkdir("sub/out/x", 0o755),
		"chmod link":     d.Chmod("sub/out", 0o777),
		"rename into":    d.Rename("sub", "sub/out/sub"),
		"link through":   d.Link("sub/out/secret", "stolen"),
		"unlink through": d.Unlink("sub/out/secret"),
		"utimens link":   d.Utimens("sub/out", 0, 0),
		"link into":      d.Symlink("..", "sub/out/up"),
	} {
		if errno == 0 {
			t.Errorf("%s: allowed", name)
		}
	}
	if b, err := os.ReadFile(filepath.Join(outside, "secret")); err != nil || string(b) != "host" {
		t.Fatalf("outside file changed: %q %v", b, err)
	}
	// The link itself can be seen, read and removed.
	if _, errno := d.Lstat("sub/out"); errno != 0 {
		t.Fatalf("lstat: %v", errno)
	}
	if target, errno := d.Readlink("sub/out"); errno != 0 || target != rel {
		t.Fatalf("readlink: %q %v", target, errno)
	}
	if errno := d.Unlink("sub/out"); errno != 0 {
		t.Fatalf("unlink: %v", errno)
	}
	// A new link is text: made, read back, never followed.
	if errno := d.Symlink("..", "up"); errno != 0 {
		t.Fatalf("symlink: %v", errno)
	}
	if target, errno := d.Readlink("up"); errno != 0 || target != ".." {
		t.Fatalf("readlink of a new link: %q %v", target, errno)
	}
	if errno := open(d, "up/"+filepath.Base(root)); errno != experimentalsys.ELOOP {
		t.Fatalf("open through a new link: %v, want ELOOP", errno)
	}
	if errno := d.Rename("up", "up2"); errno != 0 {
		t.Fatalf("rename a link: %v", errno)
	}
	// A hard link of a link is the link's, as link(2) makes it.
	if errno := d.Link("up2", "hard"); errno != 0 {
		t.Fatalf("hard link of a link: %v", errno)
	}
	if target, err := os.Readlink(filepath.Join(root, "hard")); err != nil || target != ".." {
		t.Fatalf("hard link of a link, on the host: %q %v", target, err)
	}
	// Without the patch's reopen by descriptor, no link is made.
	released := &confinedDir{FS: d.FS, root: root, maxFileSize: d.maxFileSize}
	if errno := released.Symlink("x", "y"); errno != experimentalsys.EPERM {
		t.Fatalf("symlink without the patch: %v, want EPERM", errno)
	}
	// Ordinary files still work.
	f, errno := d.OpenFile("sub/new", experimentalsys.O_CREAT|experimentalsys.O_RDWR, 0o644)
	if errno != 0 {
		t.Fatalf("create: %v", errno)
	}
	if n, errno := f.Write([]byte("ok")); n != 2 || errno != 0 {
		t.Fatalf("write: %d %v", n, errno)
	}
	f.Close()
}

func open(d *confinedDir, path string) experimentalsys.Errno {
	f, errno := d.OpenFile(path, experimentalsys.O_RDONLY, 0)
	if errno == 0 {
		f.Close()
	}
	return errno
}

func second[T any](_ T, errno experimentalsys.Errno) experimentalsys.Errno { return errno }

func TestQuotaCountsOpenFiles(t *testing.T) {
	q := &openFiles{max: 2}
	d := &countedFS{FS: newConfinedDir(t.TempDir(), 4), q: q}
	a, errno := d.OpenFile("a", experimentalsys.O_CREAT|experimentalsys.O_RDWR, 0o644)
	if errno != 0 {
		t.Fatal(errno)
	}
	b, errno := d.OpenFile("b", experimentalsys.O_CREAT|experimentalsys.O_RDWR, 0o644)
	if errno != 0 {
		t.Fatal(errno)
	}
	if _, errno := d.OpenFile("c", experimentalsys.O_CREAT|experimentalsys.O_RDWR, 0o644); errno != experimentalsys.EAGAIN {
		t.Fatalf("third open: %v, want EAGAIN", errno)
	}
	if _, errno := d.OpenFile("absent/x", experimentalsys.O_RDONLY, 0); errno != experimentalsys.EAGAIN {
		t.Fatalf("open at the limit: %v", errno)
	}
	if _, errno := d.OpenFile(".", experimentalsys.O_RDONLY, 0o600); errno != experimentalsys.EAGAIN {
		t.Fatalf("the guest's open of the mount's directory at the limit: %v", errno)
	}
	b.Close()
	b.Close() // a second close must not free a second slot
	if n, errno := a.Write([]byte("abcdef")); n != 4 || errno != 0 {
		t.Fatalf("write past the size limit: %d %v, want 4 and no error", n, errno)
	}
	if _, errno := a.Write([]byte("g")); errno != experimentalsys.ERANGE {
		t.Fatalf("write at the size limit: %v, want ERANGE (the guest's EFBIG)", errno)
	}
	if _, errno := a.Pwrite([]byte("zz"), 3); errno != 0 {
		t.Fatalf("pwrite within: %v", errno)
	}
	c, errno := d.OpenFile("c", experimentalsys.O_CREAT|experimentalsys.O_RDWR, 0o644)
	if errno != 0 {
		t.Fatalf("open after a close: %v", errno)
	}
	if _, errno := d.OpenFile("d", experimentalsys.O_CREAT|experimentalsys.O_RDWR, 0o644); errno != experimentalsys.EAGAIN {
		t.Fatalf("double close freed a slot: %v", errno)
	}
	// wazero's own open of the mount's directory (its preopen) is counted
	// but never refused, and only once.
	root, errno := d.OpenFile(".", experimentalsys.O_RDONLY, 0)
	if errno != 0 || q.held() != 3 {
		t.Fatalf("wazero's preopen at the limit: %v, %d held", errno, q.held())
	}
	if _, errno := d.OpenFile(".", experimentalsys.O_RDONLY, 0); errno != experimentalsys.EAGAIN {
		t.Fatalf("a second preopen: %v, want EAGAIN", errno)
	}
	root.Close()
	a.Close()
	c.Close()
	if q.held() != 0 {
		t.Fatalf("%d held after closing everything", q.held())
	}
}

// TestErrnosAsLinux: a mount answers a change with the errno the native
// guest's kernel gives for the same tree: wazero's own Mkdir turned
// ENOTDIR into ENOENT, and a read-only mount answered EROFS before it
// looked the path up.
func TestErrnosAsLinux(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	d := newConfinedDir(root, 1<<20)
	ro := newReadOnly(sysfs.DirFS(root))
	for name, c := range map[string]struct{ got, want experimentalsys.Errno }{
		"mkdir under a file":         {d.Mkdir("f/x", 0o755), experimentalsys.ENOTDIR},
		"mkdir deeper under a file":  {d.Mkdir("f/x/y", 0o755), experimentalsys.ENOTDIR},
		"mkdir in a missing dir":     {d.Mkdir("nope/x", 0o755), experimentalsys.ENOENT},
		"mkdir that exists":          {d.Mkdir("d", 0o755), experimentalsys.EEXIST},
		"ro mkdir that exists":       {ro.Mkdir("d", 0o755), experimentalsys.EEXIST},
		"ro mkdir new":               {ro.Mkdir("n", 0o755), experimentalsys.EROFS},
		"ro mkdir in a missing dir":  {ro.Mkdir("nope/x", 0o755), experimentalsys.ENOENT},
		"ro mkdir under a file":      {ro.Mkdir("f/x", 0o755), experimentalsys.ENOTDIR},
		"ro rmdir":                   {ro.Rmdir("d"), experimentalsys.EROFS},
		"ro rmdir in a missing dir":  {ro.Rmdir("nope/x"), experimentalsys.ENOENT},
		"ro unlink missing":          {ro.Unlink("nope"), experimentalsys.EROFS},
		"ro unlink in a missing dir": {ro.Unlink("nope/x"), experimentalsys.ENOENT},
		"ro rename":                  {ro.Rename("f", "g"), experimentalsys.EROFS},
		"ro rename from nowhere":     {ro.Rename("nope/x", "g"), experimentalsys.ENOENT},
		"ro rename to nowhere":       {ro.Rename("f", "nope/g"), experimentalsys.ENOENT},
		"ro link":                    {ro.Link("f", "g"), experimentalsys.EROFS},
		"ro link of nothing":         {ro.Link("nope", "g"), experimentalsys.ENOENT},
		"ro symlink":                 {ro.Symlink("f", "g"), experimentalsys.EROFS},
		"ro symlink under a file":    {ro.Symlink("f", "f/g"), experimentalsys.ENOTDIR},
		"ro chmod":                   {ro.Chmod("f", 0o600), experimentalsys.EROFS},
		"ro chmod missing":           {ro.Chmod("nope", 0o600), experimentalsys.ENOENT},
		"ro utimens":                 {ro.Utimens("f", 0, 0), experimentalsys.EROFS},
		"ro utimens missing":         {ro.Utimens("nope", 0, 0), experimentalsys.ENOENT},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", name, c.got, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "n")); !os.IsNotExist(err) {
		t.Errorf("the read-only mount made a directory: %v", err)
	}
	// The mount's own directory is never removed, even when empty.
	empty := t.TempDir()
	e := newConfinedDir(empty, 1<<20)
	for _, p := range []string{".", "./", ""} {
		if errno := e.Rmdir(p); errno != experimentalsys.EROFS {
			t.Errorf("rmdir %q of the mount: %v, want EROFS", p, errno)
		}
	}
	if fi, err := os.Stat(empty); err != nil || !fi.IsDir() {
		t.Fatalf("the mount's directory is gone: %v", err)
	}
}

// TestLinkFreeAgreesWithWalk: one openat2 answers as an lstat of each
// component would (the walk is what a kernel without openat2 gets).
func TestLinkFreeAgreesWithWalk(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "d", "e"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "d", "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"dl": "d", "dang": "nowhere", "d/e/up": "../.."} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	d := newConfinedDir(root, 1<<20)
	for _, p := range []string{".", "", "d", "d/", "d/e", "d/f", "d/f/x", "dl", "dl/e", "dang", "dang/x", "missing/dl",
		"d/e/up", "d/e/up/d", "/d/e", "d//e/", "d/./e"} {
		for _, last := range []bool{true, false} {
			if got, want := d.linkFree(p, last), d.walkLinkFree(p, last); got != want {
				t.Errorf("linkFree(%q, %v) = %v, the walk says %v", p, last, got, want)
			}
		}
	}
}

// A read-only mount's file served from memory goes past its end as a
// Linux file does: the seek succeeds, and a read or pread there is empty
// (both were EINVAL: f.seek(10**6) on /etc/passwd or the script itself).
func TestReadOnlyFilePastItsEnd(t *testing.T) {
	ro := newReadOnly(&sysfs.AdaptFS{FS: fstest.MapFS{"f": {Data: []byte("abc")}}})
	f, errno := ro.OpenFile("f", experimentalsys.O_RDONLY, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	defer f.Close()
	buf := make([]byte, 8)
	read := func() string {
		n, errno := f.Read(buf)
		if errno != 0 {
			t.Fatalf("read: %v", errno)
		}
		return string(buf[:n])
	}
	seek := func(off int64, whence int, want int64) {
		t.Helper()
		if got, errno := f.Seek(off, whence); errno != 0 || got != want {
			t.Fatalf("seek %d %d: %d %v, want %d", off, whence, got, errno, want)
		}
	}
	seek(10, io.SeekStart, 10)
	if got := read(); got != "" {
		t.Fatalf("read past the end: %q", got)
	}
	seek(0, io.SeekCurrent, 10)
	seek(1, io.SeekCurrent, 11)
	seek(-10, io.SeekCurrent, 1)
	if got := read(); got != "bc" {
		t.Fatalf("read back inside: %q", got)
	}
	seek(5, io.SeekEnd, 8)
	seek(-8, io.SeekCurrent, 0)
	if got := read(); got != "abc" {
		t.Fatalf("read from the start: %q", got)
	}
	if _, errno := f.Seek(-1, io.SeekStart); errno != experimentalsys.EINVAL {
		t.Fatalf("seek before the start: %v, want EINVAL", errno)
	}
	for off, want := range map[int64]string{1: "bc", 3: "", 100: ""} {
		n, errno := f.Pread(buf, off)
		if errno != 0 || string(buf[:n]) != want {
			t.Fatalf("pread at %d: %q %v, want %q", off, buf[:n], errno, want)
		}
	}
}
