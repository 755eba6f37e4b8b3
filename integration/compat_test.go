package integration

import (
	"runtime"
	"testing"

	"github.com/apysup/apysup/sandbox"
)

// TestOtherSyscallABIs: on x86_64 the x32 ABI and the i386 ABI (int 0x80)
// cannot go around the filter. Every such call fails, whatever it is (even
// getpid): the filter only knows native x86_64 calls.
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
	res := runGuest(t, "compat.py", sandbox.Limits{}, args...)
	if res.Status != sandbox.StatusOK {
		t.Fatalf("guest: %s", summary(res))
	}
	// The filter runs before the kernel looks at the call, and its answer to
	// any foreign ABI is the bad-architecture action: the caller dies of
	// SIGSYS (seccomp's package doc).
	const failed = "SIGSYS"
	parseMarkers(t, res).expect(t, map[string]string{
		"x32:unshare": failed, "x32:ptrace": failed, "x32:getpid": failed,
		"i386:unshare": failed, "i386:getpid": failed,
	})
}
