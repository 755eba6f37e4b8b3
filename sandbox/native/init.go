package native

import (
	"os"

	"github.com/opencontainers/runc/libcontainer"
	// nsenter's constructor joins the namespaces before the Go runtime starts
	// when the binary is re-executed as "init".
	_ "github.com/opencontainers/runc/libcontainer/nsenter"
)

// MaybeInit must be the first call in main() and in TestMain of every binary
// that uses the native backend: libcontainer re-executes the binary with the
// argument "init" to set up the container, and this turns that process into
// the container's init. It does not return in that case.
func MaybeInit() {
	if len(os.Args) > 1 && os.Args[1] == "init" {
		libcontainer.Init() // never returns
	}
}
