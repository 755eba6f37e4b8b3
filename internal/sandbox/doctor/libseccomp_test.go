//go:build seccomp

package doctor

import "testing"

// Guards against the silent stub: with -tags seccomp the libcontainer
// seccomp package must be the real one, linked against libseccomp.
func TestLibseccompLinked(t *testing.T) {
	if c := checkLibseccomp(); !c.OK() {
		t.Fatalf("libseccomp check: %+v", c)
	}
}
