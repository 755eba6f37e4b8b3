// Package testenv decides what a test does when the machine lacks something
// it needs (a kernel feature, a tool, the WASI build): skip on a developer's
// machine, fail loudly in CI where APYSUP_REQUIRE_ALL=1.
package testenv

import (
	"os"
	"strings"
	"testing"
)

// RequireAll reports whether every test must run (APYSUP_REQUIRE_ALL=1).
func RequireAll() bool { return os.Getenv("APYSUP_REQUIRE_ALL") == "1" }

// Need stops the test when ok is false: a failure under APYSUP_REQUIRE_ALL=1,
// a skip otherwise. what says what is missing and how to get it.
func Need(t testing.TB, ok bool, what string) {
	t.Helper()
	if ok {
		return
	}
	if RequireAll() {
		t.Fatalf("required by APYSUP_REQUIRE_ALL=1 but missing: %s", what)
	}
	t.Skipf("missing (set APYSUP_REQUIRE_ALL=1 to make this fatal): %s", what)
}

// NeedRoot stops the test unless it runs as root.
func NeedRoot(t testing.TB) {
	t.Helper()
	Need(t, os.Geteuid() == 0, "root (user namespaces with a uid range, cgroups)")
}

// ExpectFiltered checks what a confined attempt at a system call through
// another ABI (x32, or int 0x80 on x86_64) got against what the same
// attempt got unconfined on this host, first. Each is "ok:<result>", an
// errno name (the kernel's system-call entry ran and answered) or a signal
// name (the caller died).
//
// Seccomp runs at the system-call entry, so when the unconfined attempt
// reached the entry the filter must have killed the confined caller with
// SIGSYS. A host that never delivers the entry (a hypervisor that faults
// int 0x80 even unconfined) leaves nothing to filter: then the confined
// attempt must end the same way or by SIGSYS, never with a result or an
// errno, so the call provably never ran; the log says which was asserted.
func ExpectFiltered(t testing.TB, name, unconfined, confined string) {
	t.Helper()
	if !strings.HasPrefix(unconfined, "SIG") {
		if confined != "SIGSYS" {
			t.Errorf("%s: confined %s, want SIGSYS (unconfined the kernel answered: %s)", name, confined, unconfined)
		}
		return
	}
	if confined != "SIGSYS" && confined != unconfined {
		t.Errorf("%s: confined %s, want SIGSYS or %s (this host does not deliver the entry: unconfined %s)",
			name, confined, unconfined, unconfined)
		return
	}
	t.Logf("%s: this host does not deliver the entry (unconfined: %s); asserted that the call never ran (confined: %s)",
		name, unconfined, confined)
}
