//go:build !seccomp

package integration

import "testing"

// Without the seccomp tag libcontainer installs no filter at all: every
// syscall escape in this suite would succeed. Say so plainly.
func TestBuiltWithSeccompTag(t *testing.T) {
	t.Fatal("built without -tags seccomp: libcontainer's seccomp is a stub; run go test -tags seccomp ./integration/...")
}
