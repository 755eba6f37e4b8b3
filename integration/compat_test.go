package integration

import (
	"os/exec"
	"runtime"
	"testing"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/supervisor"
	"github.com/apysup/apysup/internal/testenv"
)

// TestOtherSyscallABIs: on x86_64 the x32 ABI and the i386 ABI (int 0x80)
// cannot go around the filter. The filter only knows native x86_64 calls,
// so every such call that reaches the kernel's entry kills its caller with
// SIGSYS, whatever it is (even getpid). The same guest script runs
// unconfined on this host first: an entry the host never delivers (a
// hypervisor that faults int 0x80 for everyone) cannot be filtered, and
// then the test asserts that the guest's call never ran.
func TestOtherSyscallABIs(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("x32 and int 0x80 exist on x86_64 only")
	}
	t.Parallel()
	need(t)
	var args []string
	for _, name := range []string{"unshare", "ptrace", "getpid"} {
		args = append(args, name+"="+syscallNumber(t, name))
	}
	script := guestScript(t, "compat.py")
	out, err := exec.Command(sandbox.GuestPython, append([]string{"-I", "-S", script}, args...)...).Output()
	if err != nil {
		t.Fatalf("the unconfined probe: %v", err)
	}
	host := parseMarkers(t, &supervisor.Result{Stdout: string(out)})

	res := runGuest(t, "compat.py", sandbox.Limits{}, args...)
	if res.Status != sandbox.StatusOK {
		t.Fatalf("guest: %s", summary(res))
	}
	guest := parseMarkers(t, res)
	for _, name := range []string{"x32:unshare", "x32:ptrace", "x32:getpid", "i386:unshare", "i386:getpid"} {
		testenv.ExpectFiltered(t, name, host.ending(t, name), guest.ending(t, name))
	}
}

// ending is how an attempt of compat.py ended: "ok:<result>", an errno
// name, or the signal that killed the child that made it.
func (m markers) ending(t *testing.T, name string) string {
	t.Helper()
	if got, ok := m.escaped[name]; ok {
		return got
	}
	if got, ok := m.blocked[name]; ok {
		return got
	}
	t.Fatalf("attempt %s: no marker (the probe did not run)", name)
	return ""
}
