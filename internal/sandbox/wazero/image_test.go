package wazero

import (
	"bytes"
	"io/fs"
	"testing"
	"testing/fstest"
)

// The guest files reach a child as they are: every directory and file,
// modes and bytes; an image cut short or naming a path outside the tree
// is refused.
func TestImageRoundTrip(t *testing.T) {
	files := fstest.MapFS{
		"apysup_runner.py": {Data: []byte("print('runner')\n"), Mode: 0o644},
		"pkg/__init__.py":  {Data: nil, Mode: 0o644},
		"pkg/mod.py":       {Data: []byte("x = 1\n"), Mode: 0o644},
	}
	var image bytes.Buffer
	if err := writeImage(&image, files); err != nil {
		t.Fatal(err)
	}
	got, err := decodeImage(image.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]fs.FileMode{"apysup_runner.py": 0o444, "pkg": fs.ModeDir | 0o555, "pkg/__init__.py": 0o444, "pkg/mod.py": 0o444}
	if len(got) != len(want) {
		t.Fatalf("decoded %d entries, want %d: %v", len(got), len(want), got)
	}
	for name, mode := range want {
		f, ok := got[name]
		if !ok || f.Mode != mode {
			t.Fatalf("%s: %+v", name, f)
		}
		if !mode.IsDir() && !bytes.Equal(f.Data, files[name].Data) {
			t.Fatalf("%s: %q", name, f.Data)
		}
	}
	if err := fstest.TestFS(got, "apysup_runner.py", "pkg/mod.py"); err != nil {
		t.Fatal(err)
	}

	// Entries in the walk's order, each 12 bytes of lengths and mode
	// besides its name and data: a cut anywhere else is truncated.
	boundaries := map[int]bool{0: true}
	at := 0
	for _, name := range []string{"apysup_runner.py", "pkg", "pkg/__init__.py", "pkg/mod.py"} {
		at += 12 + len(name)
		if f, ok := files[name]; ok {
			at += len(f.Data)
		}
		boundaries[at] = true
	}
	if at != image.Len() {
		t.Fatalf("image of %d bytes, entries of %d", image.Len(), at)
	}
	for n := 0; n < image.Len(); n++ {
		if _, err := decodeImage(image.Bytes()[:n]); (err == nil) != boundaries[n] {
			t.Fatalf("an image cut at %d of %d bytes: %v", n, image.Len(), err)
		}
	}
	var outside bytes.Buffer
	if err := writeImage(&outside, fstest.MapFS{"ok.py": {Data: []byte("1")}}); err != nil {
		t.Fatal(err)
	}
	escaped := bytes.Replace(outside.Bytes(), []byte("ok.py"), []byte("../.."), 1)
	if _, err := decodeImage(escaped); err == nil {
		t.Fatal("an entry named ../.. decoded")
	}
}
