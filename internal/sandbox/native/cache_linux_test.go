package native

import (
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
)

func TestCacheIsSharedAndKeyed(t *testing.T) {
	testBackend(t)
	cache := filepath.Join(t.TempDir(), "cache")
	newBackend := func(files fstest.MapFS) *Backend {
		t.Helper()
		b, err := New(Config{GuestFiles: files, CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	v1 := fstest.MapFS{"apysup_runner.py": {Data: []byte("print(1)\n")}, "agent_runtime.py": {Data: []byte("x = 1\n")}}
	v2 := fstest.MapFS{"apysup_runner.py": {Data: []byte("print(2)\n")}, "agent_runtime.py": {Data: []byte("x = 1\n")}}
	a, b, c := newBackend(v1), newBackend(v1), newBackend(v2)
	if a.guestDir != b.guestDir || a.root.dir != b.root.dir {
		t.Errorf("same inputs, different trees: %s %s", a.guestDir, b.guestDir)
	}
	if a.guestDir == c.guestDir || a.root.dir != c.root.dir {
		t.Errorf("guest files changed but the tree did not (or the root did): %s %s", a.guestDir, c.guestDir)
	}
	if _, err := os.Stat(filepath.Join(a.guestDir, "__pycache__", "agent_runtime.cpython-311.pyc")); err != nil {
		t.Error(err)
	}
	entries, _ := os.ReadDir(cache)
	if len(entries) != 3 { // rootfs, guest v1, guest v2: no build leftovers
		t.Errorf("cache holds %d entries", len(entries))
	}
}

func TestCacheMustBePrivate(t *testing.T) {
	testBackend(t)
	cache := filepath.Join(t.TempDir(), "cache")
	if err := os.Mkdir(cache, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(cache, 0o777); err != nil {
		t.Fatal(err)
	}
	if b, err := New(Config{GuestFiles: guestFiles(), CacheDir: cache}); err == nil {
		b.Close()
		t.Fatal("a world-writable cache was accepted")
	}
}
