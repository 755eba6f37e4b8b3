package wazero

import (
	"archive/zip"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

func zipOf(t *testing.T, method uint16, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, content := range files {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func treeOf(t *testing.T, zipped []byte) (*stdlibTree, error) {
	t.Helper()
	return newStdlibTree(bytes.NewReader(zipped), int64(len(zipped)))
}

// The tree serves each stored entry's bytes in place, under python3.11/,
// with the empty lib-dynload CPython looks for; a compressed entry, or one
// the import system would load in place of a source, is refused rather
// than served.
func TestStdlibTree(t *testing.T) {
	files := map[string]string{"os.py": "import sys", "__pycache__/os.cpython-311.pyc": "os code",
		"json/__init__.py": "", "json/__pycache__/__init__.cpython-311.pyc": "json code", "json/decoder.py": "",
		"lib2to3/Grammar.txt": "file_input: (NEWLINE | stmt)* ENDMARKER", "LICENSE.txt": "license"}
	tree, err := treeOf(t, zipOf(t, zip.Store, files))
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		got, err := fs.ReadFile(tree, "python3.11/"+name)
		if err != nil || string(got) != content {
			t.Errorf("%s: %q %v, want %q", name, got, err, content)
		}
		fi, err := fs.Stat(tree, "python3.11/"+name)
		if err != nil || fi.Size() != int64(len(content)) || fi.Mode() != 0o444 || fi.Name() != path.Base(name) {
			t.Errorf("%s: stat %v %v", name, fi, err)
		}
	}
	for _, dir := range []string{"python3.11/lib-dynload", "python3.11/json", "python3.11/json/__pycache__"} {
		if fi, err := fs.Stat(tree, dir); err != nil || !fi.IsDir() {
			t.Errorf("%s: %v %v", dir, fi, err)
		}
	}
	if names, err := fs.Glob(tree, "python3.11/json/*"); err != nil || strings.Join(names, " ") != "python3.11/json/__init__.py python3.11/json/__pycache__ python3.11/json/decoder.py" {
		t.Errorf("listing: %v %v", names, err)
	}
	if _, err := tree.Open("python3.11/absent.pyc"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("absent: %v", err)
	}
	for name, zipped := range map[string][]byte{
		"compressed":      zipOf(t, zip.Deflate, map[string]string{"os.py": "import sys"}),
		"pyc beside":      zipOf(t, zip.Store, map[string]string{"os.pyc": "os code"}),
		"other cache tag": zipOf(t, zip.Store, map[string]string{"__pycache__/os.pypy-73.pyc": "os code"}),
		"extension":       zipOf(t, zip.Store, map[string]string{"os.so": ""}),
		"pyo beside":      zipOf(t, zip.Store, map[string]string{"json/decoder.pyo": ""}),
		"escape":          zipOf(t, zip.Store, map[string]string{"../x.py": ""}),
		"not a zip":       []byte("PK"),
	} {
		if _, err := treeOf(t, zipped); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Served from an open zip file, the tree reads nothing until the guest
// does, and nothing once the file is closed.
func TestStdlibTreeFromFile(t *testing.T) {
	zipped := zipOf(t, zip.Store, map[string]string{"os.py": "os code"})
	name := filepath.Join(t.TempDir(), "stdlib.zip")
	if err := os.WriteFile(name, zipped, 0o444); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := newStdlibTree(f, int64(len(zipped)))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := fs.ReadFile(tree, "python3.11/os.py"); err != nil || string(got) != "os code" {
		t.Fatalf("%q %v", got, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := fs.ReadFile(tree, "python3.11/os.py"); err == nil {
		t.Fatalf("read %q after the file's Close", got)
	}
}
