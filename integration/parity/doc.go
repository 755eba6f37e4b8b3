// Package parity is the differential parity suite of SPEC.md section 9: every
// script of corpus/ runs on both backends (native CPython under libcontainer
// and the WASI build of the same CPython inside wazero) with the same sealed
// Plan, the same approval rule and the same workspace seed, and the two
// RunResults are compared after normalising what is run-specific (run ids,
// receipt ids, approval request ids).
//
// A difference fails the suite unless the corpus table lists it as a
// documented exception, pinned on both sides to the exact value each
// backend gives; docs/parity.md says why each exception exists. The package
// also benchmarks what makes the two backends differ in cost: the first
// compile of python.wasm, an empty run on each backend, and the host-call
// round trip through host_call and through the native socket.
//
// Run with: go test -race -tags seccomp ./integration/parity/ (as root; a
// host without the native backend or the WASI build skips, and fails under
// APYSUP_REQUIRE_ALL=1). The package has no non-test code and imports
// nothing but public APIs.
package parity
