//go:build !seccomp

package regrtest

import "testing"

// Without the seccomp tag libcontainer installs no filter: the native side
// would not be what apysup ships, and its differences would be wrong.
func TestBuiltWithSeccompTag(t *testing.T) {
	t.Fatal("built without -tags seccomp: libcontainer's seccomp is a stub; run go test -tags seccomp ./integration/regrtest/")
}
