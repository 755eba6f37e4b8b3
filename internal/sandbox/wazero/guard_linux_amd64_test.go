//go:build cgo && linux && amd64

package wazero

import (
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// guardProbe is run in a child of the test (TestGuardHandler): it reserves
// a guarded memory, grants one page, then does what the environment says.
func guardProbe(what string) {
	if what == "under RLIMIT_AS" {
		if err := unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: 4 << 30, Max: 4 << 30}); err != nil {
			panic(err)
		}
		m := &linearMemory{limit: 1 << 30}
		os.Stdout.WriteString("available " + strconv.FormatBool(guardAvailable()) + ", reserve: " + errText(m.reserveGuarded()) + "\n")
		os.Exit(0)
	}
	m := &linearMemory{limit: 1 << 30}
	if err := m.reserveGuarded(); err != nil {
		panic(err)
	}
	if b := m.Reallocate(pageSize); len(b) != pageSize {
		panic("no first page")
	}
	base := unsafe.Pointer(unsafe.SliceData(m.mapping))
	switch what {
	case "huge pages advised":
		// Granting a memory splits its mapping; the granted part keeps
		// the advice (adviseHuge).
		flags, err := vmFlags(uintptr(base))
		if err != nil {
			panic(err)
		}
		os.Stdout.WriteString("hg " + strconv.FormatBool(advisedHuge(flags)) + "\n")
		os.Exit(0)
	case "in bounds":
		*(*byte)(unsafe.Add(base, pageSize-1)) = 1
		os.Stdout.WriteString("wrote\n")
		os.Exit(0)
	case "past the memory":
		os.Stdout.WriteString("before\n")
		*(*byte)(unsafe.Add(base, pageSize)) = 1
	case "at the top of the reservation":
		*(*byte)(unsafe.Add(base, guardReservation-1)) = 1
	case "a Go fault beside it":
		// Go's own fault, chained to Go's handler, is still a panic
		// that recovers.
		debug.SetPanicOnFault(true)
		other, err := unix.Mmap(-1, 0, pageSize, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANON)
		if err != nil {
			panic(err)
		}
		func() {
			defer func() {
				os.Stdout.WriteString("recovered: " + strings.SplitN(recover().(error).Error(), " ", 2)[0] + "\n")
			}()
			other[0] = 1
		}()
		var p *int
		func() {
			defer func() { os.Stdout.WriteString("recovered nil\n") }()
			defer func() { _ = recover() }()
			*p = 1
		}()
		os.Exit(0)
	case "after free":
		m.Free()
		*(*byte)(unsafe.Add(base, 0)) = 1
	case "after an older one's free":
		// The guard is the newest reservation's: freeing an older one
		// leaves it.
		n := &linearMemory{limit: 1 << 30}
		if err := n.reserveGuarded(); err != nil {
			panic(err)
		}
		m.Free()
		*(*byte)(unsafe.Pointer(unsafe.SliceData(n.mapping))) = 1
	}
	os.Stdout.WriteString("no fault\n")
	os.Exit(3)
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

func init() {
	if what := os.Getenv("APYSUP_GUARD_PROBE"); what != "" {
		guardProbe(what)
	}
}

// The guard's SIGSEGV handler ends the process with SIGSEGV for a fault
// inside the guarded reservation (past the memory's length), and only
// there: the Go runtime's own faults still reach its handler and panic,
// and once the memory is freed its range is no longer the guard's.
func TestGuardHandler(t *testing.T) {
	for _, tc := range []struct {
		what    string
		signal  syscall.Signal // 0: exited, with code
		code    int
		printed string
	}{
		{"in bounds", 0, 0, "wrote\n"},
		{"huge pages advised", 0, 0, "hg " + strconv.FormatBool(hasTHP()) + "\n"},
		{"under RLIMIT_AS", 0, 0, "available false, reserve: wazero: guarded memory: reserving 8590000128 bytes: cannot allocate memory\n"},
		{"past the memory", syscall.SIGSEGV, 0, "before\n"},
		{"at the top of the reservation", syscall.SIGSEGV, 0, ""},
		{"a Go fault beside it", 0, 0, "recovered: runtime\nrecovered nil\n"},
		{"after free", 0, 2, ""}, // the Go runtime's fatal fault, not the guard's
		{"after an older one's free", syscall.SIGSEGV, 0, ""},
	} {
		t.Run(tc.what, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "APYSUP_GUARD_PROBE="+tc.what)
			var stdout strings.Builder
			cmd.Stdout = &stdout
			_ = cmd.Run()
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			switch {
			case tc.signal != 0 && (!ws.Signaled() || ws.Signal() != tc.signal):
				t.Fatalf("status %v, want killed by %v", ws, tc.signal)
			case tc.signal == 0 && (!ws.Exited() || ws.ExitStatus() != tc.code):
				t.Fatalf("status %v, want exit %d", ws, tc.code)
			case stdout.String() != tc.printed:
				t.Fatalf("printed %q, want %q", stdout.String(), tc.printed)
			}
		})
	}
}

// guardFault reads the kernel's wait status: only a child the kernel
// ended with SIGSEGV, and the parent did not kill, faulted in its guard.
func TestGuardFaultReadsTheWaitStatus(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script string
		killed bool
		want   bool
	}{
		{"SIGSEGV", "kill -SEGV $$", false, true},
		{"SIGSEGV after the parent's kill", "kill -SEGV $$", true, false},
		{"SIGKILL", "kill -KILL $$", false, false},
		{"exit 2, the Go runtime's failure", "exit 2", false, false},
		{"exit 139", "exit 139", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("/bin/sh", "-c", tc.script)
			_ = cmd.Run()
			c := &child{state: cmd.ProcessState, done: make(chan struct{}), killed: tc.killed}
			close(c.done)
			if got := c.guardFault(); got != tc.want {
				t.Fatalf("guardFault %v, want %v", got, tc.want)
			}
		})
	}
}
