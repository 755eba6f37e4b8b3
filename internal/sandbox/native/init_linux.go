package native

import (
	"os"
	"runtime"
	"strconv"
	"syscall"

	"github.com/opencontainers/runc/libcontainer"
	// nsenter's constructor joins the namespaces before the Go runtime starts
	// when libcontainer re-executes the binary as a container's init (it acts
	// only on _LIBCONTAINER_INITPIPE, which nothing else sets).
	_ "github.com/opencontainers/runc/libcontainer/nsenter"
)

// MaybeInit must be the first call in main() and in TestMain of every binary
// that runs native guests.
//
// In a container init that this binary's native backend started (see
// IsContainerInit) it becomes that init and does not return. The package's
// init function has normally done so already, as early as Go allows (below);
// correctness never depends on that order.
//
// In any other process it returns at once, having locked the calling
// goroutine to the main thread when it runs there: libcontainer joins each
// container's mount namespace from a goroutine that locks its thread and
// exits without unlocking, so that the runtime throws the thread away. The
// main thread cannot be thrown away: the runtime parks it forever, still
// inside the container's mount namespace, which then pins that run's mounts
// for the life of the process. Keeping the main goroutine on the main thread
// keeps every other goroutine off it. Importing the package does neither.
func MaybeInit() {
	if IsContainerInit() {
		libcontainer.Init() // never returns
	}
	runtime.LockOSThread()
	if syscall.Gettid() != os.Getpid() { // not the main thread: nothing to protect
		runtime.UnlockOSThread()
	}
}

// IsContainerInit reports whether this process is a container's init that
// libcontainer started by re-executing the binary: exactly the arguments
// [argv0, "init"] and libcontainer's own environment naming the descriptors
// it passed, each open and of its kind (the init and sync sockets, the log
// pipe). libcontainer builds that environment from nothing and fixes the
// arguments, so it is the one marker a re-executed init carries; a program
// run as `prog init` by a person or a script has none of it and is left
// alone. nsenter's constructor has already acted on the same environment
// before Go started, so a process that has it is a container init whatever
// Go code decides.
func IsContainerInit() bool {
	if len(os.Args) != 2 || os.Args[1] != "init" {
		return false
	}
	switch os.Getenv("_LIBCONTAINER_INITTYPE") {
	case "standard", "setns":
	default:
		return false
	}
	return fdOfKind("_LIBCONTAINER_INITPIPE", syscall.S_IFSOCK) &&
		fdOfKind("_LIBCONTAINER_SYNCPIPE", syscall.S_IFSOCK) &&
		fdOfKind("_LIBCONTAINER_LOGPIPE", syscall.S_IFIFO)
}

// fdOfKind reports whether the environment variable names an open
// descriptor (above stderr) of the given file type.
func fdOfKind(env string, kind uint32) bool {
	fd, err := strconv.Atoi(os.Getenv(env))
	if err != nil || fd < 3 {
		return false
	}
	var st syscall.Stat_t
	return syscall.Fstat(fd, &st) == nil && st.Mode&syscall.S_IFMT == kind
}

// A container init does as little as Go allows before it becomes the init:
// this runs once the packages this one imports are initialised, so usually
// before those it does not need. In the apysup binary that skips the JSON
// Schema library's metaschema compilation and the plan, broker and handler
// inits (6-7 ms of every container start, STARTUP.md). Any other process
// returns from here at once, its thread untouched.
func init() {
	if IsContainerInit() {
		libcontainer.Init() // never returns
	}
}
