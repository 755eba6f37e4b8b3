package apysup

import "github.com/apysup/apysup/internal/sandbox/native"

// Init must be the first call in main of a program that runs native
// guests. The native backend starts every container by re-executing the
// program's binary as its init: in that process Init becomes the init and
// does not return (normally the package's init functions already have).
// In every other process it returns at once; called on the main thread it
// keeps the main goroutine there, so that libcontainer's goroutines, which
// enter containers' mount namespaces, never run on the one thread the Go
// runtime cannot throw away.
//
// Only a process that libcontainer started is taken over: importing this
// package, or running the program as `prog init`, changes nothing. The
// wazero backend's child processes, re-executed from the binary in the
// same way, are taken over earlier still, by that package's init
// function, so this call serves them too without doing anything for them.
func Init() { native.MaybeInit() }
