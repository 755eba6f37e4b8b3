package wazero

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apysup/apysup/internal/rpc"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/testenv"
)

// TestCompiledCodeStamped: wazero's compilation cache (as patched) checks
// a compiled entry's checksum once, then stamps it; runs after that trust
// the stamp for that very file. An entry damaged in place is checked
// again, whatever its stamp said, and never run.
func TestCompiledCodeStamped(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles python.wasm")
	}
	testenv.Need(t, childSupported, "wazero guests in child processes")
	cache := t.TempDir()
	in := loadWith(t, Config{CompilationCacheDir: cache})
	var entry string
	for e := range cacheEntries(cache) {
		if entry != "" {
			t.Fatalf("more than one compiled entry: %v", cacheEntries(cache))
		}
		entry = filepath.Join(cache, e)
	}
	if entry == "" {
		t.Fatal("Load compiled nothing into the cache")
	}
	stamp := entry + ".verified"
	ok := func(in *Interpreter) {
		t.Helper()
		if out := run(t, "print('ran')", runOpts{in: in}); out.Status != sandbox.StatusOK || string(out.Stdout) != "ran\n" {
			t.Fatalf("%s %q %q", out.Status, out.Stdout, out.Stderr)
		}
	}

	// Just written: too young to stamp (a write in the same clock tick
	// would keep its identity).
	ok(in)
	if _, err := os.Stat(stamp); !os.IsNotExist(err) {
		t.Fatalf("an entry younger than the racy window was stamped (%v)", err)
	}
	time.Sleep(2100 * time.Millisecond)
	ok(in)
	info, err := os.Stat(stamp)
	if err != nil {
		t.Fatalf("a child's checked read did not stamp the entry: %v", err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("stamp mode %v", info.Mode())
	}
	ok(in)
	ok(loadWith(t, Config{CompilationCacheDir: cache}))
	// The children named the module as their parent did (by python.wasm's
	// digest, not its bytes): they compiled nothing of their own.
	if entries := cacheEntries(cache); len(entries) != 1 {
		t.Fatalf("compiled entries after the runs: %v", entries)
	}

	// One byte of machine code changed in place: the stamp no longer
	// names the file, the checksum is checked, and the child refuses it.
	data, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(entry, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	at := int64(len(data) / 2) // inside the machine code, 15 MB of the entry's 16
	if _, err := f.WriteAt([]byte{data[at] ^ 0x40}, at); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "main.py")
	if err := os.WriteFile(script, []byte("print('ran')"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := in.Backend(rpc.Responder(nil)).Run(context.Background(), sandbox.Job{
		ScriptPath: script, WorkspaceDir: dir,
	}, sandbox.Limits{})
	if err == nil || out.Status != sandbox.StatusSetupFailed || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Fatalf("a damaged entry: %s %v %q", out.Status, err, out.Stdout)
	}
}
