//go:build !seccomp

package parity

import "testing"

// Without the seccomp tag libcontainer installs no filter, and the native
// side of the pinned differences (gap_sockets.py: AF_INET refused) is not
// what apysup ships. Say so plainly.
func TestBuiltWithSeccompTag(t *testing.T) {
	t.Fatal("built without -tags seccomp: libcontainer's seccomp is a stub; run go test -tags seccomp ./integration/parity/")
}
