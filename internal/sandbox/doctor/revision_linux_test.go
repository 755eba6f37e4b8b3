package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apysup/apysup/internal/sandbox/wazero"
)

// The doctor names a host python3.11 of another revision than the WASI
// build's, with the fix, without failing the native backend.
func TestWasiRevisionCheck(t *testing.T) {
	pinned, err := wazero.PinnedRevision()
	if err != nil {
		t.Fatal(err)
	}
	write := func(version string) string {
		path := filepath.Join(t.TempDir(), "status")
		stanza := "Package: libpython3.11-stdlib\nStatus: install ok installed\nVersion: " + version + "\n\n"
		if err := os.WriteFile(path, []byte(stanza), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	if c := checkWasiRevision(write(pinned)); !c.OK() || c.Required {
		t.Fatalf("same revision: %+v", c)
	}
	c := checkWasiRevision(write("3.11.2-6+deb12u1"))
	if c.OK() || c.Required || c.Status != CodeWasiRevision || c.Fix != "make deps wasi-python" ||
		!strings.Contains(c.Detail, pinned) || !strings.Contains(c.Detail, "3.11.2-6+deb12u1") {
		t.Fatalf("mismatch: %+v", c)
	}
	if c := checkWasiRevision(filepath.Join(t.TempDir(), "absent")); !c.OK() {
		t.Fatalf("no dpkg: %+v", c)
	}
}
