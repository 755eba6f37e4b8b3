//go:build seccomp

package native

import (
	"testing"

	lcseccomp "github.com/opencontainers/runc/libcontainer/seccomp"
)

// libcontainer silently installs no filter when built without the seccomp
// tag; this build must link the real implementation.
func TestSeccompIsCompiledIn(t *testing.T) {
	if major, _, _ := lcseccomp.Version(); major < 2 {
		t.Fatalf("libcontainer seccomp is the stub (libseccomp version %d): build with -tags seccomp", major)
	}
}
