// Package native runs a job's Python script in Debian's /usr/bin/python3.11
// confined by the kernel, through libcontainer: new user, pid, mount, net,
// ipc, uts and cgroup namespaces; a host uid/gid pair of its own per run
// (UIDAllocator); a read-only minimal root reached with pivot_root (a
// skeleton with a generated /etc, /usr bound read-only, the guest files at
// /opt/apysup, the run dir, job and out dirs under /run/apysup, a size-capped
// /tmp, /workspace, /proc with runc's masked paths, five device nodes); no
// capabilities, no_new_privs, the seccomp package's allowlist, rlimits and
// cgroup memory+swap, pids and CPU limits; a wall-clock timeout that kills
// the whole tree; bounded stdout and stderr.
//
// A run goes through Prepare -> Start -> Assign -> Wait -> Destroy (see
// Sandbox); Backend.Run strings them together. Nothing before Assign
// depends on the job, so a Pool keeps sandboxes started ahead of their
// jobs, per limits class, with the interpreter running: the runner waits
// on a pipe for its job (the script's argv), the job's directories reach
// the started container by mount propagation, and every sandbox serves one
// run. Release gives the caller's directories back, so that the rest of
// Destroy can happen off the run's path. Before the first run the host
// is checked with sandbox/doctor (once per Backend) and a missing feature is
// a typed refusal with the doctor's code. New sweeps what supervisors that
// died left behind. STARTUP.md says where the start-up time goes.
//
// libcontainer starts every container by re-executing this binary as
// `init`; package containerinit, which this package imports, turns such a
// process into the container's init from its package init, before the
// rest of the binary initialises (MaybeInit is the documented entry).
//
// The guest's pid 1 is the same binary again, as a small C init that runs
// before the Go runtime would (containerinit.GuestInitArgv): the runner is
// its child. When pid 1 exits the kernel kills every other process of the
// run, and signals it does not forward are ignored when they come from
// inside the sandbox.
//
// The backend is Linux's (every file but this and errors.go is _linux.go):
// elsewhere only its codes and Error build, and the supervisor refuses the
// native backend with the doctor's native_unsupported_os.
//
// This package must never fall back to weaker confinement, never pass the
// host environment or host file descriptors to a guest, and never leave a
// process, mount, cgroup or directory behind, however a run ends.
package native
