package wazero

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apysup/apysup/internal/sandbox"
)

// TestCacheWatch: the notice comes before a compile into an empty cache,
// after one that added an entry, and never for a cache hit.
func TestCacheWatch(t *testing.T) {
	dir := t.TempDir()
	var said []string
	watch := func(compile func()) []string {
		said = nil
		w := cacheWatch{dir: dir, progress: func(s string) { said = append(said, s) }}
		w.before()
		compile()
		w.after()
		return said
	}
	version := filepath.Join(dir, "wazero-v1-amd64-linux")
	add := func(name string) func() {
		return func() { os.MkdirAll(version, 0o700); os.WriteFile(filepath.Join(version, name), nil, 0o600) }
	}
	if got := watch(add("a")); len(got) != 1 || !strings.HasPrefix(got[0], "compiling ") {
		t.Fatalf("empty cache: %q", got)
	}
	if got := watch(func() {}); len(got) != 0 {
		t.Fatalf("cache hit: %q", got)
	}
	if got := watch(add("b.123.tmp")); len(got) != 0 {
		t.Fatalf("a temporary file: %q", got)
	}
	if got := watch(add("a.verified")); len(got) != 0 {
		t.Fatalf("a read entry's stamp: %q", got)
	}
	if got := watch(add("c")); len(got) != 1 || !strings.HasPrefix(got[0], "compiled ") {
		t.Fatalf("a new entry: %q", got)
	}
}

// TestLoadSaysWhenItCompiles: a fresh compilation cache is a compile,
// said; the next Load reads the cache, silently. Where guests run in
// children, the next Load does not even read it (its stamp records the
// compile and the module's minimum memory), and its children run.
func TestLoadSaysWhenItCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles python.wasm")
	}
	cache := t.TempDir()
	var minMemory uint64
	for i, want := range []int{1, 0} {
		var said []string
		in := loadWith(t, Config{CompilationCacheDir: cache, Progress: func(s string) { said = append(said, s) }})
		if len(said) != want {
			t.Fatalf("load %d: said %q, want %d notices", i+1, said, want)
		}
		if i == 0 {
			minMemory = in.minMemory
			continue
		}
		if in.minMemory != minMemory || minMemory == 0 {
			t.Fatalf("the second Load's minimum memory: %d, the first's %d", in.minMemory, minMemory)
		}
		if childSupported {
			if in.runtime != nil {
				t.Fatal("the second Load compiled again, though its guests run in children")
			}
			if out := run(t, "print('child')", runOpts{in: in}); out.Status != sandbox.StatusOK || string(out.Stdout) != "child\n" {
				t.Fatalf("a run after a Load that did not compile: %s %q %q", out.Status, out.Stdout, out.Stderr)
			}
		}
	}
}
