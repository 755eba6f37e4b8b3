package native

import (
	"os"
	"runtime"

	"github.com/opencontainers/runc/libcontainer"
	// nsenter's constructor joins the namespaces before the Go runtime starts
	// when the binary is re-executed as "init".
	_ "github.com/opencontainers/runc/libcontainer/nsenter"
)

// MaybeInit must be the first call in main() and in TestMain of every binary
// that uses the native backend: libcontainer re-executes the binary with the
// argument "init" to set up the container, and this turns that process into
// the container's init. It does not return in that case.
//
// This package's init function does the same as early as Go allows: once
// the packages this one imports are initialised, so usually before those
// it does not need. In the apysup binary that skips the JSON Schema
// library's metaschema compilation and the plan, broker and handler inits
// (6-7 ms of every container start). MaybeInit stays the documented entry
// point: correctness never depends on the order of package inits.
func MaybeInit() {
	if len(os.Args) > 1 && os.Args[1] == "init" {
		libcontainer.Init() // never returns
	}
}

// libcontainer joins each container's mount namespace from a goroutine that
// locks its thread and exits without unlocking, so that the runtime throws
// the thread away. The main thread cannot be thrown away: the runtime parks
// it forever, still inside the container's mount namespace, which then pins
// that run's mounts for the life of the process. Locking the main goroutine
// to the main thread during init keeps every other goroutine off it.
func init() {
	runtime.LockOSThread()
	MaybeInit()
}
