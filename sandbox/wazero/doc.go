// Package wazero runs guest scripts in CPython 3.11 compiled to WASI
// (python/wasi) inside the wazero runtime: the second backend, which exists
// so that every script, Plan and policy can be run on both backends and the
// results compared (SPEC.md sections 8 and 9).
//
// An Interpreter is loaded once per process: it compiles python.wasm (the
// compiled code is cached on disk) and holds the stdlib zip. Each Run
// instantiates a fresh module with its own memory, files and host-call
// dispatcher; nothing is shared between runs but read-only code and files.
//
// The guest's one door to the host is the import agent_runtime_v1.host_call,
// which hands the call frame to the run's Dispatcher (the Broker)
// synchronously and answers with the same RPC response envelope the native
// transport sends. This package must never interpret, admit or cache calls
// itself, and never fall back to another backend: a missing WASI build is
// the typed refusal wasi_guest_missing.
package wazero
