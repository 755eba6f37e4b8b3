// Package integration holds the slow, end-to-end tests of apysup: real
// CPython guests run through supervisor.Run on the native backend, the
// escape and abuse suite of SPEC.md section 7 (every attempt must fail and
// the guest must see the failure as a Python exception), every RunResult
// status of section 10, concurrent runs, and a final check that nothing
// (process, mount, cgroup, socket, descriptor, temp dir) outlived the runs.
//
// A guest is two processes at least: pid 1 of its pid namespace is the
// guest init (the supervisor binary's C init: it forwards signals, reaps
// orphans and reports a script killed by a signal) and the runner, which
// runs the script, is its child.
//
// Guests are the Python files under testdata/escape; the test prepends
// _probe.py, whose helpers print one marker line per attempt (BLOCKED,
// ESCAPED, ALLOWED for controls, INFO for observations), and the tests
// assert the exact set of markers, so a probe that silently did nothing
// fails too.
//
//	syscalls_test    every call of seccomp.Refused() via libc.syscall, the
//	                 argument filters (clone/unshare namespace flags, device
//	                 nodes, TIOCSTI, prctl), set-user-ID programs
//	compat_test      x32 and int 0x80 system calls (x86_64)
//	network_test     every socket family but AF_UNIX; the host's TCP
//	                 listener and abstract socket
//	fs_test          a whole-file-system walk for a secret planted in the
//	                 host's /root and /tmp; the only reachable socket
//	writes_test      writing outside /workspace and /tmp, /proc/sys,
//	                 /proc/self/exe, the user-namespace maps
//	host_test        /proc, signals to host pids, environment, inherited
//	                 descriptors, /dev, SysV IPC, masked /proc files
//	limits_test      fork bomb, orphans reaped by pid 1, memory, timeout,
//	                 CPU quota, /tmp and file size, rlimits, stdout flood
//	channel_test     the capability channel is the one door; a timeout
//	                 during a call; a connection flood
//	concurrent_test  8 runs at once: uids, /tmp, signals, stolen credentials
//	workspace_test   traps left for the host in /workspace and out/
//	statuses_test    every status; SIGKILL of a guest (by itself, of its
//	                 pid 1 or the script by the host); signals to pid 1;
//	                 a cancelled run
//	leftovers_test   TestMain's final check
//
// Run with: go test -race -tags seccomp ./integration/... (as root; under
// APYSUP_REQUIRE_ALL=1 a host that cannot run the native backend fails;
// APYSUP_SHOW_GUEST=1 with -v logs every guest's output).
package integration
