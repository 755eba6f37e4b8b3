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
// the typed refusal wasi_guest_missing.
//
// Limits: MemoryBytes caps linear memory (a refused grow is a MemoryError in
// the guest, memory_limit when the guest then fails); Timeout and ctx end
// the guest through wazero's close-on-context-done, which checks at every
// loop back-edge by calling into Go and makes guest code about 3x slower
// (measured: an empty run 100 ms of CPU without it, 293 ms with it), the
// price of ending any guest, even one spinning in C; OutputBytes caps
// stdout and stderr; OpenFiles and FileSizeBytes bound the host files the
// guest opens and writes. Pids, CPUs and TmpBytes do not apply: one thread,
// no processes, no /tmp.
//
// Where the guest's world differs from native (beyond what WASI lacks:
// threads, subprocesses, sockets, ctypes, ssl, sqlite3): no /tmp
// (tempfile uses /workspace), no symlinks in the writable mounts, EAGAIN and
// EIO where RLIMIT_NOFILE and RLIMIT_FSIZE give EMFILE and EFBIG, a caught
// MemoryError where the cgroup would kill, and a response envelope bounded
// to 1 MiB (native reads up to 8 MiB).
package wazero
