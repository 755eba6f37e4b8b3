package wazero

import (
	"archive/zip"
	"bytes"
	"io/fs"
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

// The tree serves each stored entry's bytes in place, under python3.11/,
// with the empty lib-dynload CPython looks for; anything else in the zip
// is refused rather than served.
func TestStdlibTree(t *testing.T) {
	files := map[string]string{"os.pyc": "os code", "json/__init__.pyc": "json code", "json/decoder.pyc": ""}
	tree, err := stdlibTree(zipOf(t, zip.Store, files))
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		got, err := fs.ReadFile(tree, "python3.11/"+name)
		if err != nil || string(got) != content {
			t.Errorf("%s: %q %v, want %q", name, got, err, content)
		}
	}
	for _, dir := range []string{"python3.11/lib-dynload", "python3.11/json"} {
		if fi, err := fs.Stat(tree, dir); err != nil || !fi.IsDir() {
			t.Errorf("%s: %v %v", dir, fi, err)
		}
	}
	for name, zipped := range map[string][]byte{
		"compressed": zipOf(t, zip.Deflate, map[string]string{"os.pyc": "os code"}),
		"source":     zipOf(t, zip.Store, map[string]string{"os.py": "import sys"}),
		"escape":     zipOf(t, zip.Store, map[string]string{"../x.pyc": ""}),
		"not a zip":  []byte("PK"),
	} {
		if _, err := stdlibTree(zipped); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
