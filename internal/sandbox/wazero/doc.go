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
// The guest's one door to the host is the import agent_runtime_v1.host_call,
// which hands the call frame to the run's Dispatcher (the Broker)
// synchronously and answers with the same RPC response envelope the native
// transport sends. This package must never interpret, admit or cache calls
// itself, and never fall back to another backend: a missing WASI build is
// the typed refusal wasi_guest_missing, a build of another python3.11
// revision than the host's (the native guest's) wasi_python_revision_mismatch.
//
// Statuses come from host evidence only, as natively: timeout from the
// run's timer, killed (canceled) from the caller's context, memory_limit
// from the allocator's refusal to grow. The guest's exit code, whatever it
// is (wazero's own codes for a closed context included), is an exit status
// (its low 8 bits), and a trap is the guest's own failure: error,
// wasm_trap.
//
// Limits: MemoryBytes caps linear memory (a refused grow is a MemoryError in
// the guest, memory_limit when the guest then fails); Timeout counts from
// when the runner reads its job, as natively from the job's hand-over to a
// started interpreter (clock.go); Timeout and ctx end the guest through wazero's close-on-context-done, which checks at every
// loop back-edge by calling into Go and makes guest code about 3x slower
// (measured: an empty run 100 ms of CPU without it, 293 ms with it), the
// price of ending any guest, even one spinning in C; OutputBytes caps
// stdout and stderr; OpenFiles bounds every file and directory the guest
// holds open on every mount (the six mounts' own directories count), and
// FileSizeBytes every file it writes. The out directory is bounded as its
// tmpfs is natively (sandbox.OutDirBytes, sandbox.OutDirFiles), with what
// the guest frees credited back. Pids, CPUs and TmpBytes do not apply: one
// thread, no processes, no /tmp.
//
// What the guest sees of the host: the stdlib (each module read from the
// build's checked zip when the guest opens it), the in-memory guest and job
// files; the host's /usr/share/zoneinfo, read-only and resolved beneath
// itself by the kernel (openat2 RESOLVE_BENEATH: a symlink that leaves it
// dangles; Linux only: elsewhere the guest gets no zoneinfo); the run's
// out directory (made in Job.RunDir, or in a locked
// directory under os.TempDir that Load sweeps once its process died) and
// the workspace, both writable and refusing symlinks.
//
// Where the guest's world differs from native (beyond what WASI lacks:
// threads, subprocesses, sockets, ctypes, ssl, sqlite3): no /tmp
// (tempfile uses /workspace), no symlinks in the writable mounts, EAGAIN
// where RLIMIT_NOFILE gives EMFILE, EIO where RLIMIT_FSIZE gives EFBIG and
// a full out directory ENOSPC, a caught MemoryError where the cgroup would
// kill, and a response envelope bounded to 1 MiB (native reads up to
// 8 MiB).
package wazero
