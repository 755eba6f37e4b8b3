package wazero

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/testenv"
)

// P is a page: the budget charges whole pages, as tmpfs does.
const P = tmpfsPage

func TestDirBudget(t *testing.T) {
	dir := t.TempDir()
	d, err := newBudgetDir(newConfinedDir(dir, 1<<20), dir, 100*P, 4)
	if err != nil {
		t.Fatal(err)
	}
	expect := func(what string, bytes, files int64) {
		t.Helper()
		if b, f := d.b.used(); b != bytes || f != files {
			t.Fatalf("%s: %d bytes %d files, want %d and %d", what, b, f, bytes, files)
		}
	}
	create := func(name string) experimentalsys.File {
		t.Helper()
		f, errno := d.OpenFile(name, experimentalsys.O_CREAT|experimentalsys.O_RDWR, 0o644)
		if errno != 0 {
			t.Fatalf("create %s: %v", name, errno)
		}
		return f
	}
	write := func(f experimentalsys.File, n int) (int, experimentalsys.Errno) {
		return f.Write(make([]byte, n))
	}
	expect("empty", 0, 1)

	a := create("a")
	if n, errno := write(a, 60*P); n != 60*P || errno != 0 {
		t.Fatalf("write: %d %v", n, errno)
	}
	expect("a", 60*P, 2)
	b := create("b")
	if n, errno := write(b, 60*P); n != 40*P || errno != 0 {
		t.Fatalf("write past the budget: %d %v, want 40 pages (a short write)", n, errno)
	}
	if _, errno := write(b, 1*P); errno != experimentalsys.EIO {
		t.Fatalf("write at the budget: %v, want EIO", errno)
	}
	if _, errno := b.Pwrite([]byte("z"), 50*P); errno != experimentalsys.EIO {
		t.Fatalf("a hole costs what it spans: %v", errno)
	}
	if errno := b.Truncate(40*P + 1); errno != experimentalsys.EIO {
		t.Fatalf("truncate up: %v", errno)
	}
	if _, errno := b.Pwrite([]byte("rewrite"), 0); errno != 0 {
		t.Fatalf("rewriting within the file costs nothing: %v", errno)
	}
	expect("a and b", 100*P, 3)
	if errno := b.Truncate(10 * P); errno != 0 {
		t.Fatal(errno)
	}
	expect("b truncated", 70*P, 3)

	// Names: one file each, hard links too; a directory one.
	if errno := d.Mkdir("dir", 0o755); errno != 0 {
		t.Fatal(errno)
	}
	expect("dir", 70*P, 4)
	if errno := d.Link("a", "a2"); errno != experimentalsys.EIO {
		t.Fatalf("link past the files: %v", errno)
	}
	if _, errno := d.OpenFile("c", experimentalsys.O_CREAT|experimentalsys.O_RDWR, 0o644); errno != experimentalsys.EIO {
		t.Fatalf("create past the files: %v", errno)
	}
	if errno := d.Mkdir("dir2", 0o755); errno != experimentalsys.EIO {
		t.Fatalf("mkdir past the files: %v", errno)
	}
	if _, errno := d.Lstat("c"); errno != experimentalsys.ENOENT {
		t.Fatalf("a refused create left a file: %v", errno)
	}
	if errno := d.Rmdir("dir"); errno != 0 {
		t.Fatal(errno)
	}
	if errno := d.Link("a", "a2"); errno != 0 {
		t.Fatal(errno)
	}
	expect("a linked", 70*P, 4)
	if errno := d.Unlink("a2"); errno != 0 {
		t.Fatal(errno)
	}
	expect("a unlinked once", 70*P, 3)

	// An unlinked file keeps its bytes while open.
	if errno := d.Unlink("a"); errno != 0 {
		t.Fatal(errno)
	}
	expect("a unlinked, open", 70*P, 3)
	if _, errno := write(a, 31*P); errno != experimentalsys.EIO && errno != 0 {
		t.Fatal(errno)
	}
	a.Close()
	a.Close()
	expect("a closed", 10*P, 2)

	// Renaming over a file frees it; O_TRUNC frees what it cuts.
	c := create("c")
	write(c, 50*P)
	c.Close()
	expect("c", 60*P, 3)
	if errno := d.Rename("c", "b"); errno != 0 {
		t.Fatal(errno)
	}
	expect("c over b (b open)", 60*P, 3)
	b.Close()
	expect("b closed", 50*P, 2)
	f, errno := d.OpenFile("b", experimentalsys.O_RDWR|experimentalsys.O_TRUNC, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	expect("b truncated on open", 0, 2)
	f.Close()
}

// What the tree holds already is counted: by name for files, once per
// inode for bytes.
func TestDirBudgetCountsWhatIsThere(t *testing.T) {
	dir := t.TempDir()
	testenv.WriteTree(t, dir, map[string]string{"a": strings.Repeat("\x00", 30*P), "sub/b": strings.Repeat("\x00", 50*P)})
	if err := os.Link(filepath.Join(dir, "sub/b"), filepath.Join(dir, "b2")); err != nil {
		t.Fatal(err)
	}
	d, err := newBudgetDir(newConfinedDir(dir, 1<<20), dir, 100*P, 6)
	if err != nil {
		t.Fatal(err)
	}
	// The root, sub, a, and b's two names.
	if b, f := d.b.used(); b != 80*P || f != 5 {
		t.Fatalf("%d bytes %d files, want 80 pages and 5", b, f)
	}
	f, errno := d.OpenFile("c", experimentalsys.O_CREAT|experimentalsys.O_RDWR, 0o644)
	if errno != 0 {
		t.Fatal(errno)
	}
	if n, _ := f.Write(make([]byte, 50*P)); n != 20*P {
		t.Fatalf("wrote %d, want 20 pages", n)
	}
	if _, errno := d.OpenFile("d", experimentalsys.O_CREAT|experimentalsys.O_RDWR, 0o644); errno != experimentalsys.EIO {
		t.Fatalf("create past the files: %v", errno)
	}
	if errno := d.Unlink("b2"); errno != 0 {
		t.Fatal(errno)
	}
	if errno := d.Unlink("a"); errno != 0 {
		t.Fatal(errno)
	}
	if n, _ := f.Write(make([]byte, 50*P)); n != 30*P {
		t.Fatalf("wrote %d after a was removed, want 30 pages", n)
	}
	f.Close()
	if b, f := d.b.used(); b != 100*P || f != 4 {
		t.Fatalf("%d bytes %d files, want 100 pages and 4", b, f)
	}
}

// A file costs its data in whole pages, as on a tmpfs: files of 5,000
// bytes cost two pages each, so a budget of eight pages takes four of
// them, not six; a file's last page is filled without new charge.
func TestDirBudgetChargesPages(t *testing.T) {
	dir := t.TempDir()
	d, err := newBudgetDir(newConfinedDir(dir, 1<<20), dir, 8*P, 10)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		f, errno := d.OpenFile(string(rune('a'+i)), experimentalsys.O_CREAT|experimentalsys.O_RDWR, 0o644)
		if errno != 0 {
			t.Fatal(errno)
		}
		if n, errno := f.Write(make([]byte, 5000)); n != 5000 || errno != 0 {
			t.Fatalf("file %d: wrote %d %v", i, n, errno)
		}
		if i == 3 {
			if n, errno := f.Write(make([]byte, 2*P-5000)); n != 2*P-5000 || errno != 0 {
				t.Fatalf("the rest of the last page: %d %v", n, errno)
			}
			if _, errno := f.Write([]byte("x")); errno != experimentalsys.EIO {
				t.Fatalf("a byte past the pages: %v, want EIO", errno)
			}
		}
		f.Close()
	}
	if b, f := d.b.used(); b != 8*P || f != 5 {
		t.Fatalf("%d bytes %d files, want 8 pages and 5", b, f)
	}
	f, errno := d.OpenFile("e", experimentalsys.O_CREAT|experimentalsys.O_RDWR, 0o644)
	if errno != 0 {
		t.Fatal(errno)
	}
	defer f.Close()
	if _, errno := f.Write([]byte("x")); errno != experimentalsys.EIO {
		t.Fatalf("a fifth file's first byte: %v, want EIO", errno)
	}
}

// fillPy writes until a budget refuses: fill_bytes writes count chunks to
// path, fill_files makes count empty files named prefix + "f<i>"; each
// prints where it stopped (fill_files also returns how many it made).
const fillPy = probePy + `def fill_bytes(path, chunk, count):
    n = 0
    try:
        with open(path, "wb", buffering=0) as f:
            for _ in range(count):
                n += f.write(b"x" * chunk)
        print("bytes: no limit")
    except OSError as e:
        print("bytes stopped", n, code(e))
def fill_files(prefix, count):
    made = 0
    try:
        for i in range(count):
            open(prefix + "f%d" % i, "wb").close()
            made += 1
        print("files: no limit")
    except OSError as e:
        print("files stopped", made, code(e))
    return made
`

// The out directory is bounded as natively by its tmpfs: bytes and files,
// credited back when freed.
func TestOutDirIsBounded(t *testing.T) {
	out := run(t, fillPy+`out = "/run/apysup/out/"
fill_bytes(out + "big", 1 << 20, 64)
os.remove(out + "big")
made = fill_files(out, 1000)
for i in range(made):
    os.remove(out + "f%d" % i)
with open(out + "again", "wb") as f:
    f.write(b"y" * (4 << 20))
os.remove(out + "again")
print("room again")
`, runOpts{})
	want := "bytes stopped 5242880 OSError ENOSPC\nfiles stopped 63 OSError ENOSPC\nroom again\n"
	if out.Status != sandbox.StatusOK || string(out.Stdout) != want || out.GuestOutcome == nil {
		t.Fatalf("status %s stdout %q, want %q; outcome %s stderr %s", out.Status, out.Stdout, want, out.GuestOutcome, out.Stderr)
	}
}

// The workspace is bounded as its tmpfs bounds it natively, whether or not
// the supervisor could mount one: what the caller put there counts.
func TestWorkspaceIsBounded(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "seed"), make([]byte, 100<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	out := run(t, fillPy+`fill_bytes("big", 64 << 10, 64)
fill_files("", 100)
`, runOpts{workspace: ws, limits: sandbox.Limits{WorkspaceBytes: 1 << 20, WorkspaceFiles: 10}})
	// 1 MiB less the seed; 10 files less the root, the seed and big.
	want := "bytes stopped 946176 OSError ENOSPC\nfiles stopped 7 OSError ENOSPC\n"
	if out.Status != sandbox.StatusOK || string(out.Stdout) != want {
		t.Fatalf("status %s stdout %q, want %q; stderr %s", out.Status, out.Stdout, want, out.Stderr)
	}
}

// /tmp is the run's own, as natively: writable, bounded by Limits.TmpBytes
// and TmpFiles (bytes and files, credited back when freed), where
// tempfile puts its files, apart from the workspace, and gone after the run.
func TestTmpIsTheRunsOwn(t *testing.T) {
	ws := t.TempDir()
	runDir := t.TempDir()
	out := run(t, fillPy+`import tempfile
print("gettempdir", tempfile.gettempdir())
with tempfile.NamedTemporaryFile() as f:
    print("named", os.path.dirname(f.name))
with open("/tmp/kept", "w") as f:
    f.write("x")
fill_bytes("/tmp/big", 64 << 10, 64)
os.remove("/tmp/big")
fill_files("/tmp/", 5000)
print("workspace", sorted(os.listdir(".")))
`, runOpts{workspace: ws, runDir: runDir, limits: sandbox.Limits{TmpBytes: 1 << 20}})
	// 1 MiB less /tmp/kept's page (a tmpfs charges whole pages); 1024
	// files (the least TmpFiles gives) less the directory and /tmp/kept.
	want := "gettempdir /tmp\nnamed /tmp\nbytes stopped 1044480 OSError ENOSPC\nfiles stopped 1022 OSError ENOSPC\nworkspace []\n"
	if out.Status != sandbox.StatusOK || string(out.Stdout) != want {
		t.Fatalf("status %s stdout %q, want %q; stderr %s", out.Status, out.Stdout, want, out.Stderr)
	}
	for _, dir := range []string{ws, runDir} {
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Fatalf("left in %s: %v", dir, ents)
		}
	}
}

// pwrite(2) on a file opened with O_APPEND writes at its end on Linux,
// whatever the offset, and leaves the descriptor's offset where it was;
// the budget counts the bytes there, not at the offset given.
func TestPwriteOnAnAppendFileAppends(t *testing.T) {
	dir := t.TempDir()
	d, err := newBudgetDir(newConfinedDir(dir, 1<<20), dir, P, 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, errno := d.OpenFile("f", experimentalsys.O_RDWR|experimentalsys.O_APPEND, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	defer f.Close()
	buf := make([]byte, 2)
	if n, errno := f.Read(buf); n != 2 || errno != 0 {
		t.Fatalf("read: %d %v", n, errno)
	}
	if n, errno := f.Pwrite([]byte("PW"), 0); n != 2 || errno != 0 {
		t.Fatalf("pwrite: %d %v", n, errno)
	}
	if at, _ := f.Seek(0, 1); at != 2 {
		t.Fatalf("offset after pwrite %d, want 2", at)
	}
	// The budget (a page) has P-7 bytes left at the end: a short write,
	// then none, as at a full disk, whatever offset pwrite names.
	if n, errno := f.Pwrite(make([]byte, P), 0); n != P-7 || errno != 0 {
		t.Fatalf("pwrite past the budget: %d %v", n, errno)
	}
	if n, errno := f.Pwrite([]byte("x"), 0); n != 0 || errno != experimentalsys.EIO {
		t.Fatalf("pwrite at a full budget: %d %v", n, errno)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "f")); len(got) != P || string(got[:7]) != "helloPW" {
		t.Fatalf("file %q", got[:min(len(got), 16)])
	}
}
