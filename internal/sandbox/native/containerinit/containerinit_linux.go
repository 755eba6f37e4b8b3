package containerinit

import (
	"os"
	"strconv"
	"syscall"

	"github.com/opencontainers/runc/libcontainer"
	// nsenter's constructor joins the namespaces before the Go runtime starts
	// when libcontainer re-executes the binary as a container's init (it acts
	// only on _LIBCONTAINER_INITPIPE, which nothing else sets).
	_ "github.com/opencontainers/runc/libcontainer/nsenter"
)

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

// Init becomes the container's init when this process is one
// (IsContainerInit) and does not return then; otherwise it returns at once.
func Init() {
	if IsContainerInit() {
		libcontainer.Init() // never returns
	}
}

// A container init does as little as Go allows before it becomes the init
// (see the package doc).
func init() { Init() }
