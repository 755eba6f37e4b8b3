// Package testenv decides what a test does when the machine lacks something
// it needs (a kernel feature, a tool, the WASI build): skip on a developer's
// machine, fail loudly in CI where APYSUP_REQUIRE_ALL=1.
package testenv

import (
	"os"
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
