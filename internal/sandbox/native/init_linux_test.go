package native

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apysup/apysup/internal/testenv"
)

// probeProgram prints its arguments and whether its main goroutine ever
// ran on another thread than the main one. It sleeps in a system call
// while other goroutines keep every P busy: the runtime hands the main
// thread's P to another thread meanwhile, and an unlocked main goroutine
// then resumes on whichever thread has a P; a locked one only on the main
// thread.
const probeProgram = `package main

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
	IMPORT
)

EXTRA

func main() {
	fmt.Println("own output", os.Args[1:])
	fmt.Println("main goroutine moved off the main thread:", moved())
}

func moved() bool {
	stop := make(chan struct{})
	defer close(stop)
	for i := 0; i < runtime.GOMAXPROCS(0)+1; i++ {
		go func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		ts := syscall.NsecToTimespec(int64(2 * time.Millisecond))
		syscall.Nanosleep(&ts, nil) // a blocking system call: the runtime hands its P to another thread
		if syscall.Gettid() != os.Getpid() {
			return true
		}
	}
	return false
}
`

// TestImportDoesNotHijack: a program that imports apysup (and with
// it this package) behaves, run as "prog init", exactly as without the
// import: its own output, exit 0, its main goroutine free to move between
// threads. The locked build shows that the probe sees a lock.
func TestImportDoesNotHijack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three programs")
	}
	run := func(name, imports, extra string) string {
		t.Helper()
		src := strings.NewReplacer("IMPORT", imports, "EXTRA", extra).Replace(probeProgram)
		bin := testenv.BuildProgram(t, src, "-tags", "seccomp")
		cmd := exec.Command(bin, "init")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v (stdout %q)", name, err, out)
		}
		return string(out)
	}
	plain := run("plain", "", "")
	imported := run("imported", `_ "github.com/apysup/apysup"`, "") // the root imports the supervisor and this package
	// What this package's init used to do.
	locked := run("locked", "", "func init() { runtime.LockOSThread() }")
	const free = "own output [init]\nmain goroutine moved off the main thread: true\n"
	if plain != free {
		t.Fatalf("plain program: %q, want %q", plain, free)
	}
	if imported != plain {
		t.Errorf("with the import: %q, without: %q", imported, plain)
	}
	if want := strings.Replace(free, "true", "false", 1); locked != want {
		t.Errorf("probe does not see a locked main goroutine: %q, want %q", locked, want)
	}
}

// New refuses a binary that the guest's user could not run as pid 1.
func TestGuestMustBeAbleToExecTheBinary(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "apysup")
	for mode, ok := range map[os.FileMode]bool{0o755: true, 0o711: true, 0o750: false, 0o700: false} {
		if err := os.WriteFile(exe, nil, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(exe, mode); err != nil {
			t.Fatal(err)
		}
		if err := checkGuestCanExec(exe); (err == nil) != ok {
			t.Errorf("mode %v: %v", mode, err)
		}
	}
	if err := checkGuestCanExec("/proc/self/exe"); err != nil {
		t.Errorf("this test binary: %v", err)
	}
}
