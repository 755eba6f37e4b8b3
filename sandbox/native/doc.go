// Package native runs a job's Python script in Debian's /usr/bin/python3.11
// confined by the kernel, through libcontainer: new user, pid, mount, net,
// ipc, uts and cgroup namespaces; a host uid/gid pair of its own per run; a
// read-only minimal root reached with pivot_root; no capabilities,
// no_new_privs, a seccomp filter, rlimits and cgroup memory, pids and CPU
// limits; a wall-clock timeout that kills the whole tree.
//
// A run goes through Prepare -> Assign -> Start -> Wait -> Destroy (see
// Sandbox); Backend.Run strings them together. Before any run the host is
// checked with sandbox/doctor and a missing feature is a typed refusal.
//
// This package must never fall back to weaker confinement, never pass the
// host environment or host file descriptors to a guest, and never leave a
// process, mount, cgroup or directory behind, however a run ends.
package native
