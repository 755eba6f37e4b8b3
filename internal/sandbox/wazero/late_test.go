package wazero

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apysup/apysup/internal/sandbox"
)

// inProcess is an Interpreter that runs guests in this process (with
// wazero's back-edge check), loaded once per test binary: these tests
// drive a guest's start and its job's binding directly, as a child does.
var inProcess = sync.OnceValues(func() (*Interpreter, error) {
	return Load(context.Background(), Config{inProcess: true})
})

func inProcessInterpreter(t *testing.T) *Interpreter {
	t.Helper()
	interpreter(t) // the build is there, or the test fails as every other
	in, err := inProcess()
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// startedGuest starts a guest ahead of its job, as a child does, and
// returns it once the guest waits for its job's files, with what it
// printed and whether its job was opened.
func startedGuest(t *testing.T) (g *guest, ran chan guestRun, stdout *bytes.Buffer, opened *atomic.Bool) {
	t.Helper()
	in := inProcessInterpreter(t)
	stdout, opened = &bytes.Buffer{}, &atomic.Bool{}
	waiting := make(chan struct{})
	var waited atomic.Bool
	g, err := in.startGuest(context.Background(), 64<<20, wasm32MemoryBytes, stdout, os.Stderr,
		func() { opened.Store(true) },
		func() {
			if !waited.Swap(true) {
				close(waiting)
			}
		},
		func(context.Context, []byte, string) ([]byte, bool) { return nil, false })
	if err != nil {
		t.Fatal(err)
	}
	ran = make(chan guestRun, 1)
	go func() { ran <- g.run(nil) }()
	select {
	case <-waiting:
	case res := <-ran:
		t.Fatalf("the guest ended before it waited for its job: %+v", res)
	case <-time.After(2 * time.Minute):
		t.Fatal("the guest never reached for its job")
	}
	return g, ran, stdout, opened
}

// TestGuestStartsBeforeItsJob: a guest started ahead of its job runs
// CPython's start and the runner's imports, waits for its job's files
// without opening its job, and then runs the job it is bound to with the
// job's own mounts and limits, past the memory limit it started with.
func TestGuestStartsBeforeItsJob(t *testing.T) {
	g, ran, stdout, opened := startedGuest(t)
	if _, high := g.mem.usage(); high == 0 || opened.Load() {
		t.Fatalf("before its job: memory %d bytes, job opened %v; want CPython started and no job read", high, opened.Load())
	}
	dir := t.TempDir()
	ws, out, tmp := filepath.Join(dir, "ws"), filepath.Join(dir, "out"), filepath.Join(dir, "tmp")
	for _, d := range []string{ws, out, tmp} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := []byte(`import sys
big = bytearray(72 << 20)  # with the 40 MiB it starts with, past the 64 MiB of its start
held = []
try:
    for i in range(40):
        held.append(open("/workspace/f%d" % i, "w"))
except OSError as e:
    print("open refused after", len(held))
for f in held:
    f.close()
print("args", sys.argv[1:], len(big) >> 20)
`)
	argv, err := sandbox.Job{ScriptPath: "/x/main.py", Args: []string{"a b"}}.ArgvFileData()
	if err != nil {
		t.Fatal(err)
	}
	j := guestJob{
		Script: script, ScriptName: "main.py", Prelude: []byte("import agent_runtime\nagent_runtime._bind(None)\n"), Argv: argv,
		Workspace: ws, OutDir: out, TmpDir: tmp, MemoryBytes: 128 << 20, OpenFiles: 30, FileSizeBytes: 1 << 20,
		WorkspaceBytes: 1 << 20, WorkspaceFiles: 100, TmpBytes: 1 << 20, TmpFiles: 100,
	}
	if err := g.bind(j); err != nil {
		t.Fatal(err)
	}
	var res guestRun
	select {
	case res = <-ran:
	case <-time.After(2 * time.Minute):
		t.Fatal("the bound guest did not end")
	}
	if res.setupErr != nil || res.end.kind == endTrapped || res.memoryRefused {
		t.Fatalf("run %+v", res)
	}
	// The runner's own files and the nine mounts' directories hold some of
	// the job's 30; the rest are the script's.
	got := stdout.String()
	if !opened.Load() || !bytes.Contains([]byte(got), []byte("args ['a b'] 72\n")) || !bytes.Contains([]byte(got), []byte("open refused after ")) {
		t.Fatalf("stdout %q, job opened %v", got, opened.Load())
	}
	if _, err := os.Stat(filepath.Join(ws, "f0")); err != nil {
		t.Errorf("the job's workspace: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, sandbox.OutcomeFile)); err != nil {
		t.Errorf("the job's out directory: %v", err)
	}
}
