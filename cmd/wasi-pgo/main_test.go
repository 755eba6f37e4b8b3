package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apysup/apysup/internal/sandbox/wazero"
	"github.com/apysup/apysup/internal/testenv"
)

// TestTrain runs build.sh's training script (python/wasi/pgo/train.py) on
// the WASI build this tree uses (not an instrumented one) with a stand-in
// for CPython's test package: what the guest writes at
// /workspace/python.profraw is what train copies out, whatever regrtest's
// exit status; a run that writes no profile, or ends other than ok, is an
// error.
func TestTrain(t *testing.T) {
	if testing.Short() {
		t.Skip("real guests are not run with -short (make unit)")
	}
	testenv.NeedRoot(t)
	_, err := wazero.Locate("")
	var ue *wazero.UnavailableError
	testenv.Need(t, !errors.As(err, &ue), "the WASI CPython build ("+wazero.BuildCommand+")")
	if err != nil {
		t.Fatal(err)
	}
	cache, err := wazero.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", cache) // train sets it; restored after

	for _, tc := range []struct {
		name, main string
		want       string // the profile copied out, or "error: ..." (a substring of the error)
	}{
		{"failed tests still train", `import sys
def main():
    assert sys.argv == ["regrtest", "--pgo"], sys.argv
    with open("/workspace/python.profraw", "wb") as f:
        f.write(b"counters")
    sys.exit(2)
`, "counters"},
		{"no profile", `def main():
    pass
`, "error: wrote no profile"},
		{"a run that fails", `def main():
    raise RuntimeError("broken")
`, "error: the training run ended error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ws := filepath.Join(dir, "workspace")
			pkg := filepath.Join(ws, "test", "libregrtest")
			if err := os.MkdirAll(pkg, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, body := range map[string]string{
				filepath.Join(ws, "test", "__init__.py"): "",
				filepath.Join(pkg, "__init__.py"):        "",
				filepath.Join(pkg, "main.py"):            tc.main,
			} {
				if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			profile := filepath.Join(dir, "python.profraw")
			err := train(cache, ws, filepath.Join("..", "..", "python", "wasi", "pgo", "train.py"), profile, 2*time.Minute)
			if want, ok := strings.CutPrefix(tc.want, "error: "); ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("train: %v, want an error with %q", err, want)
				}
				if _, err := os.Stat(profile); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("a failed training left %s (%v)", profile, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(profile)
			if err != nil || string(got) != tc.want {
				t.Fatalf("profile %q %v, want %q", got, err, tc.want)
			}
			left, _ := filepath.Glob(filepath.Join(dir, "export-*"))
			if len(left) != 0 {
				t.Fatalf("train left %v", left)
			}
		})
	}
}
