// Package integration holds the slow, end-to-end tests of apysup: real
// CPython guests run through supervisor.Run on the native backend, the
// escape and abuse suite of SPEC.md section 7 (every attempt must fail and
// the guest must see the failure as a Python exception), every RunResult
// status of section 10, concurrent runs, and a final check that nothing
// (process, mount, cgroup, socket, temp dir) outlived the runs.
//
// Guests are the Python files under testdata/escape; each prints one marker
// line per attempt (see testdata/escape/_probe.py) and the tests assert the
// exact set of markers, so a probe that silently did nothing fails too.
//
// Run with: go test -race -tags seccomp ./integration/... (as root; under
// APYSUP_REQUIRE_ALL=1 a host that cannot run the native backend fails).
// The package has no non-test code and imports nothing but public APIs.
package integration
