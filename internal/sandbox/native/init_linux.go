package native

import (
	"os"
	"runtime"
	"syscall"

	"github.com/apysup/apysup/internal/sandbox/native/containerinit"
)

// MaybeInit must be the first call in main() and in TestMain of every binary
// that runs native guests.
//
// In a container init that this binary's native backend started (see
// containerinit.IsContainerInit) it becomes that init and does not return.
// Package containerinit's init function has normally done so already, as
// early as Go allows; correctness never depends on that order.
//
// In any other process it returns at once, having locked the calling
// goroutine to the main thread when it runs there: libcontainer joins each
// container's mount namespace from a goroutine that locks its thread and
// exits without unlocking, so that the runtime throws the thread away. The
// main thread cannot be thrown away: the runtime parks it forever, still
// inside the container's mount namespace, which then pins that run's mounts
// for the life of the process. Keeping the main goroutine on the main thread
// keeps every other goroutine off it. Importing the package does neither.
// A main goroutine the runtime has already moved off the main thread cannot
// be moved back: apysup's own programs import package mainthread, which
// locks it from an init function instead.
func MaybeInit() {
	containerinit.Init() // returns only in a process that is not one
	runtime.LockOSThread()
	if syscall.Gettid() != os.Getpid() { // not the main thread: nothing to protect
		runtime.UnlockOSThread()
	}
}
