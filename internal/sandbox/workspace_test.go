package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/apysup/apysup/internal/testenv"
)

func TestSnapshotIsStableAndSensitive(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	files := map[string]string{"x.txt": "hello", "sub/y.txt": "world", "sub/deeper/z": ""}
	testenv.WriteTree(t, a, files)
	testenv.WriteTree(t, b, files)
	ta, err := Snapshot(a)
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := Snapshot(b)
	if ta.Digest() != tb.Digest() || len(ta.Entries) != 5 || ta.Bytes != 10 {
		t.Fatalf("%v %v %+v", ta.Digest(), tb.Digest(), ta)
	}
	for i := 1; i < len(ta.Entries); i++ {
		if ta.Entries[i-1].Path >= ta.Entries[i].Path {
			t.Fatal("entries not sorted")
		}
	}
	os.WriteFile(filepath.Join(b, "x.txt"), []byte("hellO"), 0o644)
	tb2, _ := Snapshot(b)
	os.Chmod(filepath.Join(a, "x.txt"), 0o600)
	ta2, _ := Snapshot(a)
	if tb2.Digest() == ta.Digest() || ta2.Digest() == ta.Digest() {
		t.Fatal("content or mode change not reflected")
	}
	empty, _ := Snapshot(t.TempDir())
	if empty.Digest() == "" || len(empty.Entries) != 0 {
		t.Fatal("empty tree")
	}
}

func TestExportStagesAndRefuses(t *testing.T) {
	src := t.TempDir()
	testenv.WriteTree(t, src, map[string]string{"out/report.md": "# done", "data.json": "{}"})
	tree, err := Snapshot(src)
	if err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	target := filepath.Join(parent, "export")
	if err := Export(src, target, tree); err != nil {
		t.Fatal(err)
	}
	got, _ := Snapshot(target)
	if got.Digest() != tree.Digest() {
		t.Fatal("exported tree differs")
	}
	if err := Export(src, target, tree); codeOf(err) != CodeWorkspaceTargetExists {
		t.Fatalf("overwrite: %v", err)
	}
	// A tree that changed after the snapshot is refused and leaves nothing.
	testenv.WriteTree(t, src, map[string]string{"late.txt": "x"})
	if err := Export(src, filepath.Join(parent, "export2"), tree); codeOf(err) != CodeWorkspaceChanged {
		t.Fatalf("changed: %v", err)
	}
	// Symlinks are never exported.
	link := t.TempDir()
	os.Symlink("/etc/passwd", filepath.Join(link, "passwd"))
	lt, _ := Snapshot(link)
	if len(lt.Entries) != 1 || lt.Entries[0].Type != "symlink" {
		t.Fatalf("%+v", lt)
	}
	if err := Export(link, filepath.Join(parent, "export3"), lt); codeOf(err) != CodeWorkspaceUnexportable {
		t.Fatalf("symlink: %v", err)
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 1 || entries[0].Name() != "export" {
		t.Fatalf("leftovers in %s: %v", parent, entries)
	}
}

func TestCopyTreeRefusesLinks(t *testing.T) {
	src := t.TempDir()
	testenv.WriteTree(t, src, map[string]string{"a": "1"})
	os.Symlink("/etc", filepath.Join(src, "etc"))
	if err := CopyTree(src, t.TempDir()); codeOf(err) != CodeWorkspaceInputInvalid {
		t.Fatalf("%v", err)
	}
}

// The root is what the caller named: a link to a directory is followed,
// anything but a directory refused (the run went on with an empty
// workspace, status ok).
func TestCopyTreeRoot(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	testenv.WriteTree(t, src, map[string]string{"a": "1"})
	if err := os.Symlink(src, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if err := CopyTree(filepath.Join(dir, "link"), dst); err != nil {
		t.Fatalf("a link to a directory: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "a")); err != nil || string(b) != "1" {
		t.Fatalf("copied through the link: %q %v", b, err)
	}
	for _, root := range []string{filepath.Join(src, "a"), "/dev/null", filepath.Join(dir, "missing")} {
		if err := CopyTree(root, t.TempDir()); codeOf(err) != CodeWorkspaceInputInvalid {
			t.Errorf("%s: %v, want %s", root, err, CodeWorkspaceInputInvalid)
		}
	}
}

func TestWorkspaceReceiptSeal(t *testing.T) {
	w := WorkspaceReceipt{RunID: "r", Policy: "discard", Disposition: "discarded", EntryCount: 2}
	w.Seal()
	if !w.Verify() {
		t.Fatal("does not verify")
	}
	w.Bytes = 1
	if w.Verify() {
		t.Fatal("tampering undetected")
	}
}

func codeOf(err error) string {
	if we, ok := err.(*WorkspaceError); ok {
		return we.Code
	}
	return ""
}

// TestExportModes: an export reproduces exactly the permission bits the
// final snapshot records (and the receipt binds), whatever the
// supervisor's umask: group- and world-writable files, read-only
// directories, executables; never a set-ID bit.
func TestExportModes(t *testing.T) {
	for _, umask := range []int{0o022, 0o077, 0} {
		t.Run(fmt.Sprintf("umask %03o", umask), func(t *testing.T) {
			old := syscall.Umask(umask)
			defer syscall.Umask(old)
			dir := t.TempDir()
			modes := map[string]os.FileMode{
				"shared.txt": 0o666, "group.txt": 0o664, "tool.sh": 0o755, "private": 0o600, "setuid": 0o4755,
				"open": 0o777 | os.ModeDir, "sealed": 0o555 | os.ModeDir, "sealed/inside.txt": 0o644,
			}
			for _, name := range []string{"shared.txt", "group.txt", "tool.sh", "private", "setuid", "open", "sealed", "sealed/inside.txt"} {
				p := filepath.Join(dir, name)
				var err error
				if modes[name].IsDir() {
					err = os.Mkdir(p, 0o700)
				} else {
					err = os.WriteFile(p, []byte(name), 0o600)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			for _, name := range []string{"shared.txt", "group.txt", "tool.sh", "private", "setuid", "open", "sealed/inside.txt", "sealed"} {
				m := modes[name]
				if err := os.Chmod(filepath.Join(dir, name), m.Perm()|m&os.ModeSetuid); err != nil {
					t.Fatal(err)
				}
			}
			want, err := Snapshot(dir)
			if err != nil {
				t.Fatal(err)
			}
			target := filepath.Join(t.TempDir(), "out")
			if err := Export(dir, target, want); err != nil {
				t.Fatalf("export: %v", err)
			}
			for name, m := range modes {
				fi, err := os.Lstat(filepath.Join(target, name))
				if err != nil {
					t.Fatal(err)
				}
				if got := fi.Mode() & (os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky); got != m.Perm() {
					t.Errorf("%s: exported %v, want %v", name, got, m.Perm())
				}
			}
			if got, err := Snapshot(target); err != nil || got.Digest() != want.Digest() {
				t.Errorf("the exported tree is not the snapshot's: %v", err)
			}
		})
	}
}

// TestSnapshotDeeperThanPathMax: a tree no path reaches is refused as too
// large, briefly.
func TestSnapshotDeeperThanPathMax(t *testing.T) {
	dir := t.TempDir()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2100; i++ { // 4200 bytes of "d/"
		if err := unix.Mkdirat(fd, "d", 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, "d", unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		unix.Close(fd)
		fd = next
	}
	unix.Close(fd)
	_, err = Snapshot(dir)
	if codeOf(err) != CodeWorkspaceTooLarge || len(err.Error()) > 200 {
		t.Fatalf("snapshot: %v", err)
	}
}

// TestSnapshotRefusesNamesNotUTF8: an entry's path is a JSON string, in
// which every invalid byte would become U+FFFD, so two trees that differ
// only there would share a digest. Such a name is refused, at the top or
// deeper, by the snapshot (unexportable) and by a seed's copy (invalid
// input); any UTF-8 name is kept exactly.
func TestSnapshotRefusesNamesNotUTF8(t *testing.T) {
	for _, name := range []string{"\xff", "sub/\xfe", "caf\xe9", "\xed\xa0\x80"} {
		dir := t.TempDir()
		testenv.WriteTree(t, dir, map[string]string{"sub/ok": "1", name: "same"})
		if _, err := Snapshot(dir); codeOf(err) != CodeWorkspaceUnexportable || strings.Contains(err.Error(), name) {
			t.Errorf("snapshot with %q: %v", name, err)
		}
		if err := CopyTree(dir, t.TempDir()); codeOf(err) != CodeWorkspaceInputInvalid {
			t.Errorf("copy of %q: %v", name, err)
		}
	}
	a, b := t.TempDir(), t.TempDir()
	testenv.WriteTree(t, a, map[string]string{"café": "same"})
	testenv.WriteTree(t, b, map[string]string{"cafe\u0301": "same"})
	ta, err := Snapshot(a)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := Snapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	if ta.Entries[0].Path != "café" || ta.Digest() == tb.Digest() {
		t.Errorf("UTF-8 names: %+v %+v", ta.Entries, tb.Entries)
	}
}
