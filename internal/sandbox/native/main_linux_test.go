package native

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apysup/apysup/internal/sandbox"
	_ "github.com/apysup/apysup/internal/sandbox/native/mainthread" // the main goroutine keeps the main thread (see the package)
	"github.com/apysup/apysup/internal/testenv"
)

func TestMain(m *testing.M) {
	MaybeInit()
	code := m.Run()
	if sharedBackend != nil {
		if err := sharedBackend.Close(); err != nil {
			println("close backend:", err.Error())
			code = 1
		}
	}
	os.Exit(code)
}

var (
	sharedOnce    sync.Once
	sharedBackend *Backend
	sharedErr     error
)

// testBackend is one Backend for the whole test binary; tests that need the
// host to be ready skip (or fail under APYSUP_REQUIRE_ALL=1) otherwise.
func testBackend(t testing.TB) *Backend {
	t.Helper()
	testenv.NeedRoot(t)
	sharedOnce.Do(func() {
		sharedBackend, sharedErr = New(Config{GuestFiles: guestFiles()})
	})
	if sharedErr != nil {
		t.Fatalf("New: %v", sharedErr)
	}
	if f := sharedBackend.Doctor(context.Background()).FirstFailure(); f != nil {
		testenv.Need(t, false, f.Name+": "+f.Detail+" (fix: "+f.Fix+")")
	}
	return sharedBackend
}

// newJob writes script into a fresh script dir and makes a workspace and a run dir.
func newJob(t testing.TB, script string, args ...string) sandbox.Job {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "main.py")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "ws")
	run := filepath.Join(dir, "run")
	for _, d := range []string{ws, run} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return sandbox.Job{ScriptPath: path, Args: args, WorkspaceDir: ws, RunDir: run}
}

func run(t testing.TB, b *Backend, script string, limits sandbox.Limits, args ...string) *sandbox.Outcome {
	t.Helper()
	out, err := b.Run(context.Background(), newJob(t, script, args...), limits)
	if err != nil {
		t.Fatalf("Run: %v (outcome %+v)", err, out)
	}
	return out
}
