// Package seccomp owns the system-call policy of the native sandbox: which
// calls a CPython 3.11 guest may make, with which arguments, and what every
// other call returns. The policy is data (policy.go); this package only turns
// it into the two shapes others consume:
//
//   - (*Policy).Libcontainer: a libcontainer configs.Seccomp that
//     sandbox/native hands to runc's libcontainer, which loads it just
//     before exec with no_new_privs set;
//   - (*Policy).OCI: the same rules as an OCI runtime-spec seccomp profile
//     (JSON), printed by `apysup seccomp export` so users can read and diff
//     what confines their code.
//
// The two are built from the same rules and a test proves that runc's own
// conversion of the OCI profile gives exactly the libcontainer value.
//
// # What a guest sees
//
//   - A call that is not allowed fails with EPERM, so Python raises
//     PermissionError instead of the process being killed.
//   - socket and socketpair for any family but AF_UNIX fail with
//     EAFNOSUPPORT ("Address family not supported"), the error a kernel
//     without that family gives, which libraries already handle.
//   - clone3 fails with ENOSYS so glibc falls back to clone, whose flags a
//     filter can inspect; clone with any namespace flag fails with EPERM.
//   - ioctl and prctl are allowed only for the few requests CPython makes.
//   - Under libcontainer, calls numbered above the newest call the policy
//     names fail with ENOSYS instead of EPERM (runc prepends that stub so
//     that libc falls back from calls the kernel or profile is too old for).
//   - Only the native architecture is allowed; 32-bit compat calls (int 0x80
//     on x86_64) hit libseccomp's bad-architecture action and kill the thread.
//
// Refused lists the calls refused on purpose, each with its reason; the
// escape suite attempts every one of them from inside a real guest.
//
// # How the allowlist is kept honest
//
// testdata/workload.py is a broad stdlib workload. The tests run it with
// /usr/bin/python3.11 under the filter (loaded both by libseccomp-golang and
// by runc's own InitSeccomp) and, with strace, check that no call was
// refused on the way, so a library quietly falling back from EPERM cannot
// hide a gap. Raw-syscall probes prove each refusal and argument filter in
// the kernel, next to a run without the filter as control, and a 32-bit
// int 0x80 call from CPython is shown to die with SIGSYS (on a host that
// delivers int 0x80 at all: the unconfined control is made first, and
// where it faults, the test asserts that the call never ran).
//
// # What this package must never do
//
// It never loads a filter into the running process (the sandbox's runner
// does that in the child, after fork, before exec), never widens the policy
// at run time (there is no option to add a call), and never lets a call on
// Refused appear in an allow rule: tests assert all three.
package seccomp
