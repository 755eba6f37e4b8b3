package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSnapshotIsStableAndSensitive(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	files := map[string]string{"x.txt": "hello", "sub/y.txt": "world", "sub/deeper/z": ""}
	writeTree(t, a, files)
	writeTree(t, b, files)
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
	writeTree(t, src, map[string]string{"out/report.md": "# done", "data.json": "{}"})
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
	writeTree(t, src, map[string]string{"late.txt": "x"})
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
	writeTree(t, src, map[string]string{"a": "1"})
	os.Symlink("/etc", filepath.Join(src, "etc"))
	if err := CopyTree(src, t.TempDir()); codeOf(err) != CodeWorkspaceInputInvalid {
		t.Fatalf("%v", err)
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
