package wazero

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func zipOf(t *testing.T, method uint16, files map[string]string) []byte {
	t.Helper()
	var entries [][2]string
	for name, content := range files {
		entries = append(entries, [2]string{name, content})
	}
	return zipOfEntries(t, method, entries...)
}

// zipOfEntries is zipOf with the entries (name, content) in order, a name
// possibly twice.
func zipOfEntries(t *testing.T, method uint16, entries ...[2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		name, content := e[0], e[1]
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

// stdlibFiles is a small stdlib: modules, bytecode, a package, data.
var stdlibFiles = map[string]string{"os.py": "import sys", "__pycache__/os.cpython-311.pyc": "os code",
	"json/__init__.py": "", "json/__pycache__/__init__.cpython-311.pyc": "json code", "json/decoder.py": "x = 1",
	"encodings/aliases.py": "aliases = {}", "lib2to3/Grammar.txt": "file_input: (NEWLINE | stmt)* ENDMARKER",
	"LICENSE.txt": "license"}

// The tree serves each stored entry's bytes in place, under python3.11/,
// with the empty lib-dynload CPython looks for; a compressed entry, or one
// the import system would load in place of a source, is refused rather
// than served.
func TestStdlibTree(t *testing.T) {
	files := stdlibFiles
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
	// A name the tree cannot serve as one thing: refused, not the last
	// entry's bytes served.
	for want, zipped := range map[string][]byte{
		`entry "os.py" appears twice`:            zipOfEntries(t, zip.Store, [2]string{"os.py", "a"}, [2]string{"os.py", "b"}),
		`entry "json" is a file and a directory`: zipOf(t, zip.Store, map[string]string{"json": "", "json/decoder.py": ""}),
	} {
		if _, err := treeOf(t, zipped); err == nil || err.Error() != want {
			t.Errorf("%v, want %s", err, want)
		}
	}
}

// The tree is a conforming fs.FS (testing/fstest.TestFS: every file and
// directory it lists opens, reads, stats and lists alike through each
// method), its listings carry each file's size, and a directory's stat
// lists nothing (CPython stats a sys.path directory at every import).
func TestStdlibTreeIsAFileSystem(t *testing.T) {
	files := stdlibFiles
	tree, err := treeOf(t, zipOf(t, zip.Store, files))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for name := range files {
		want = append(want, "python3.11/"+name)
	}
	if err := fstest.TestFS(tree, append(want, "python3.11/lib-dynload")...); err != nil {
		t.Fatal(err)
	}
	entries, err := fs.ReadDir(tree, "python3.11/json")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, fmt.Sprintf("%s %v %d", e.Name(), info.Mode(), info.Size()))
	}
	if got := strings.Join(listed, ", "); got != "__init__.py -r--r--r-- 0, __pycache__ dr-xr-xr-x 0, decoder.py -r--r--r-- 5" {
		t.Errorf("listing: %s", got)
	}
	if allocs := testing.AllocsPerRun(100, func() { _, _ = tree.Stat("python3.11") }); allocs > 1 {
		t.Errorf("a directory's stat allocates %v times", allocs)
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

// The host's os-release beside python3.11, where the native guest finds
// it (/usr/lib/os-release): a file of the tree like the zip's, and
// nothing added that would shadow or join the stdlib.
func TestStdlibTreeAddFile(t *testing.T) {
	tree, err := treeOf(t, zipOf(t, zip.Store, stdlibFiles))
	if err != nil {
		t.Fatal(err)
	}
	release := []byte("PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n")
	tree.addFile(osReleaseName, release)
	for _, refused := range []string{osReleaseName, "python3.11", "python3.11/extra.py", ".", "../x", "/abs"} {
		tree.addFile(refused, []byte("shadow"))
	}
	tree.addFile("absent", nil)
	var want []string
	for name := range stdlibFiles {
		want = append(want, "python3.11/"+name)
	}
	if err := fstest.TestFS(tree, append(want, "python3.11/lib-dynload", osReleaseName)...); err != nil {
		t.Fatal(err)
	}
	if got, err := fs.ReadFile(tree, osReleaseName); err != nil || !bytes.Equal(got, release) {
		t.Fatalf("read %q, %v", got, err)
	}
	if info, err := tree.Stat(osReleaseName); err != nil || info.Size() != int64(len(release)) || info.Mode() != 0o444 {
		t.Fatalf("stat %v, %v", info, err)
	}
	if got := strings.Join(dirNames(t, tree, "."), " "); got != "os-release python3.11" {
		t.Fatalf("root lists %s", got)
	}
	if _, err := tree.Stat("python3.11/extra.py"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a file added under python3.11: %v", err)
	}
}

// hostOSRelease reads this host's file as the native guest would see it,
// or nothing where there is none.
func TestHostOSRelease(t *testing.T) {
	want, err := os.ReadFile(osReleaseHostPath)
	got := hostOSRelease()
	switch {
	case err != nil && got != nil:
		t.Fatalf("no %s (%v), but read %q", osReleaseHostPath, err, got)
	case err == nil && len(want) <= maxOSReleaseBytes && !bytes.Equal(got, want):
		t.Fatalf("read %q, the file holds %q", got, want)
	}
}

// The host's package directories under /usr/lib are in the tree, empty,
// listed in sorted order beside python3.11, and a name already there is
// left as it is.
func TestStdlibTreeHostPackageDirs(t *testing.T) {
	tree, err := treeOf(t, zipOf(t, zip.Store, stdlibFiles))
	if err != nil {
		t.Fatal(err)
	}
	tree.addHostPackageDirs()
	tree.addEmptyDir("python3.11") // taken: nothing changes
	if got := dirNames(t, tree, "."); !slices.Equal(got, []string{"python3", "python3.11"}) {
		t.Errorf("root lists %v", got)
	}
	if got := dirNames(t, tree, "python3/dist-packages"); len(got) != 0 {
		t.Errorf("dist-packages lists %v", got)
	}
	if fi, err := fs.Stat(tree, "python3/dist-packages"); err != nil || !fi.IsDir() {
		t.Errorf("stat dist-packages: %v %v", fi, err)
	}
	var want []string
	for name := range stdlibFiles {
		want = append(want, "python3.11/"+name)
	}
	if err := fstest.TestFS(tree, append(want, "python3/dist-packages")...); err != nil {
		t.Fatal(err)
	}
}
