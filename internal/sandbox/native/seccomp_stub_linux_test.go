//go:build !seccomp

package native

import "testing"

// Without the seccomp tag libcontainer would run guests without a filter.
func TestSeccompIsCompiledIn(t *testing.T) {
	t.Fatal("built without -tags seccomp: libcontainer's seccomp is a stub; use go test -tags seccomp")
}
