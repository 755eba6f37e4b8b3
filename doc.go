// Package apysup runs untrusted Python under a sealed capability Plan, as a
// Go library: the same runs as `apysup run`, without the CLI.
//
//	func main() {
//		apysup.Init() // first: a container start re-executes this binary
//		res, err := apysup.Run(context.Background(), apysup.Request{Source: []byte("print(6*7)")})
//		...
//	}
//
// The surface is small on purpose: Init, Run and a long-lived Supervisor
// (New, Run, Close) that keeps backends, and a pool of started native
// sandboxes, across runs. A Plan is built and sealed with package plan,
// handlers are registered with package broker; the Result is the RunResult
// of SPEC.md section 10, receipts and event ledger included.
//
// The library builds on every OS with CGO_ENABLED=0 (portable_test.go
// checks macOS): the wazero backend, Plan sealing and receipt verification
// work everywhere. The native backend is Linux's; elsewhere a native run is
// refused with native_unsupported_os and Init does nothing.
//
// This package must never fall back from an unavailable backend to another
// or to weaker confinement, and Init must never take over a process that
// apysup's native backend did not start.
package apysup
