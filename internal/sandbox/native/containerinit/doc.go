// Package containerinit turns a process that libcontainer re-executed as a
// container's init into that init, from its package init function, before
// the rest of the binary initialises.
//
// Every native sandbox starts by re-executing the supervisor binary as
// `init`; every package init function linked into that binary then runs
// again, in every sandbox, unless one of them becomes the init first. Go
// initialises a package once its imports are, choosing the first by import
// path among those ready: this package imports libcontainer and nothing of
// the project's, so it runs right after libcontainer's own dependencies,
// before the JSON Schema library, the plan, broker, RPC and HTTP packages
// that the sandbox package reaches through the doctor (STARTUP.md has the
// figures). It must never import anything it does not need for that.
//
// Any other process returns from its init at once (three fstat calls).
//
// The same binary is the sandbox's pid 1 after that (GuestInitArgv): the
// init libcontainer set up execs it again as a small C init
// (guestinit_linux.c), which runs as a constructor before the Go runtime
// starts and never returns to it.
package containerinit
