package containerinit

// The C init is a constructor in guestinit_linux.c; importing C makes cgo
// compile it into every binary that links this package.

import "C"

// guestInitFlag is argv[1] of the C init (guestinit_linux.c), the one
// marker its constructor acts on.
const guestInitFlag = "--apysup-guest-init"

// GuestInitArgv is the argv of a container whose pid 1 is this binary's
// small init, running command as its only child: the init forwards signals
// to it, reaps every orphan, and exits with its status; when a signal
// kills it, the init writes the signal into the outcome file (as the
// runner's outcome, {"exit_code":128+N,"result_set":false,"signal":N}) and
// exits 128+N.
//
// The executable is /proc/self/exe as libcontainer's init resolves it when
// it execs the container's process: the sealed clone of the supervisor
// binary that the init itself runs from (read-only, CVE-2019-5736). Before
// this init the runner was pid 1 and forked the script's interpreter from
// its own, whose copy-on-write page faults cost more than this whole
// process (STARTUP.md). outcome and command[0] must be absolute paths.
func GuestInitArgv(outcome string, command []string) []string {
	return append([]string{"/proc/self/exe", guestInitFlag, outcome, "--"}, command...)
}
