package wazero

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A child maps a build file only while it is the version its parent
// checked: any write since (here a new mtime, which moves the ctime too)
// is refused.
func TestMapBuildFileRefusesAChangedFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), wasmFile)
	if err := os.WriteFile(name, []byte("checked bytes"), 0o444); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	id, ok := identify(f)
	if !ok {
		t.Fatal("no identity")
	}
	data, err := mapBuildFile(int(f.Fd()), id)
	if err != nil || string(data) != "checked bytes" {
		t.Fatalf("mapped %q, %v", data, err)
	}
	other := id
	other.Ino++
	if _, err := mapBuildFile(int(f.Fd()), other); err == nil {
		t.Fatal("mapped a file of another identity")
	}
	if err := os.Chtimes(name, time.Now(), time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := mapBuildFile(int(f.Fd()), id); err == nil {
		t.Fatal("mapped a file changed since it was checked")
	}
}
