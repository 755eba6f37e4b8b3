// Package mainthread keeps the main goroutine of the program that imports
// it on the main thread, from package initialisation on.
//
// libcontainer joins a container's mount namespace from a goroutine that
// locks its thread and returns without unlocking, so that the runtime
// throws the thread away. The main thread cannot be thrown away: the
// runtime parks it forever, still in that namespace, where it pins the
// run's mounts for the life of the process. native.MaybeInit locks the
// main goroutine when it finds itself on the main thread, but a main or a
// TestMain that the runtime already moved to another thread (it may, at
// any blocking system call of the package inits) leaves the main thread
// free for such a goroutine. A lock taken in an init function holds from
// the start: the runtime then runs main on the main thread.
//
// apysup's own programs and test binaries import it. The library does not,
// so that importing apysup never changes how a user's program schedules
// its main goroutine (TestImportDoesNotHijack).
package mainthread

import "runtime"

func init() { runtime.LockOSThread() }
