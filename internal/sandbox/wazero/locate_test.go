package wazero

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/apysup/apysup/python/wasi"
)

// The Go key and build.sh's key must agree, or the backend would never
// find what `make wasi-python` built.
func TestBuildKeyMatchesBuildScript(t *testing.T) {
	out, err := exec.Command("bash", "../../../python/wasi/build.sh", "--print-key").Output()
	if err != nil {
		t.Fatalf("build.sh --print-key: %v", err)
	}
	key, err := BuildKey(wasi.Inputs)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != key {
		t.Fatalf("build.sh key %s, Go key %s: an input file is missing from python/wasi/inputs.go or build.sh", got, key)
	}
}

func TestMissingBuildIsTyped(t *testing.T) {
	dir := t.TempDir()
	for name, err := range map[string]error{
		"Locate": func() error { _, err := Locate(dir); return err }(),
		"Load": func() error {
			_, err := Load(context.Background(), Config{CacheDir: dir, CompilationCacheDir: t.TempDir()})
			return err
		}(),
	} {
		var u *UnavailableError
		if !errors.As(err, &u) || u.Code != ErrorCodeGuestMissing {
			t.Fatalf("%s: %v, want an UnavailableError %s", name, err, ErrorCodeGuestMissing)
		}
		if !strings.Contains(err.Error(), "make wasi-python") {
			t.Fatalf("%s: %q does not name the command that builds it", name, err)
		}
	}
}
