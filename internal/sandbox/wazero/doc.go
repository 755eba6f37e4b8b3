// Package wazero runs guest scripts in CPython 3.11 compiled to WASI
// (python/wasi) inside the wazero runtime: the second backend, which exists
// so that every script, Plan and policy can be run on both backends and the
// results compared (SPEC.md sections 8 and 9).
//
// An Interpreter is loaded once per process: it compiles python.wasm (the
// compiled code is cached on disk) and holds the stdlib. Each Run
// instantiates a fresh module with its own memory, files and host-call
// dispatcher; nothing is shared between runs but read-only code and files.
//
// The guest's one door to the host is the import agent_runtime_v1.host_call
// (besides WASI preview 1 on its own mounts, the host's libm, apysup_libm,
// chmod on its own mounts, apysup_fs, and its own death by a signal,
// apysup_proc),
// which hands the call frame to the run's Dispatcher (the Broker)
// synchronously and answers with the same RPC response envelope the native
// transport sends. This package must never interpret, admit or cache calls
// itself, and never fall back to another backend: a missing WASI build is
// the typed refusal wasi_guest_missing, a build of another python3.11
// revision than the host's (the native guest's) wasi_python_revision_mismatch.
//
// Each Run's guest runs in a child process that the package re-executes
// from the running binary (/proc/self/exe) and that takes over in this
// package's init function, before any other package's init or main: no
// program needs a call of its own for it (apysup.Init and
// native.MaybeInit document the same entry). The child maps its parent's
// checked build (python.wasm and the stdlib zip as its parent opened and
// checked them, refused if written since; the guest files in a sealed
// memfd), loads the compiled code from the disk cache as its load
// message says, then reads its job from the same pipe (with Config.Pool,
// children wait there loaded, ahead of their runs, each used once), writes the guest's stdout and stderr to two pipes that the
// parent copies into the run's Capture, sends host calls over a socketpair
// to the parent, which answers each with the run's Broker exactly as an
// in-process call (respond: the same bounds, codes and envelope), and
// writes its report of the guest's ending on a result pipe that the
// parent parses as untrusted input (parseReport). The parent's timer and
// context end the run by killing the child's process group; the child
// dies with its parent (PR_SET_PDEATHSIG) and is always reaped. Because
// the kill ends the guest, the code is compiled without wazero's
// close-on-context-done, whose check at every loop back-edge made guest
// code about 3x slower. Before its guest runs, the child confines itself
// (confine_linux.go: no_new_privs, rlimits, a seccomp allowlist; new
// network, IPC and UTS namespaces when the parent is root). Off Linux the
// guest runs in-process, with the check.
//
// Statuses come from host evidence only, as natively: timeout from the
// run's timer, killed (canceled) from the caller's context, memory_limit
// from the allocator's refusal to grow. The guest's exit code, whatever it
// is (wazero's own codes for a closed context included), is an exit status
// (its low 8 bits), and a trap is the guest's own failure: error,
// wasm_trap. The child is as trusted as its guest once the guest has run:
// its report can only say what a guest could have made true itself (an
// exit code, a trap, a refused grow that a guest can always provoke), so
// it never makes a run ok that failed, nor a timeout, a kill or a setup
// failure of a guest that started; a child that ends without a report it
// can read is the guest's failure too: error, wasm_child_died.
//
// Limits: MemoryBytes caps linear memory (a refused grow is a MemoryError in
// the guest, memory_limit when the guest then fails); Timeout counts from
// when the runner reads its job, as natively from the job's hand-over to a
// started interpreter (clock.go; the child's own load is bounded apart);
// OutputBytes caps stdout and stderr; OpenFiles bounds every file and
// directory the guest holds open on every mount (nine mounts' own
// directories count, as the native guest's first descriptors), and
// FileSizeBytes every file it writes. The out directory and /tmp are bounded as their tmpfs are natively
// (sandbox.OutDirBytes and OutDirFiles; TmpBytes and Limits.TmpFiles), with
// what the guest frees credited back. Pids and CPUs do not apply: one
// thread, no processes.
//
// What the guest sees of the host: the stdlib (each module read from the
// build's checked zip when the guest opens it), the in-memory guest and job
// files and the native guest's generated /etc (sandbox.EtcFiles); the
// host's /usr/share/zoneinfo, read-only and resolved beneath
// itself by the kernel (openat2 RESOLVE_BENEATH: a symlink that leaves it
// dangles; Linux only: elsewhere the guest gets no zoneinfo); the run's
// out directory and /tmp (made in Job.RunDir, or in a locked directory
// under os.TempDir that Load sweeps once its process died) and the
// workspace, all writable and refusing symlinks.
//
// Where the guest's world differs from native (beyond what WASI lacks:
// threads, subprocesses, sockets, ctypes, ssl): no symlinks in
// the writable mounts, a caught MemoryError where the cgroup would kill,
// and a response envelope bounded to 1 MiB (native reads up to 8 MiB).
package wazero
