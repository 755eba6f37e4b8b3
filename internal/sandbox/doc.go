// Package sandbox owns what every backend shares: the Job a run executes,
// its Limits, the Outcome a backend reports, the statuses of SPEC.md
// section 10, the paths a guest sees (identical on both backends), and the
// workspace: snapshots, staged exports and workspace receipts.
//
// The backends live below it (native: libcontainer; wazero: CPython for
// WASI), and supervisor ties a Plan, a Broker, a channel and a backend into
// one run. This package must never import a backend, and a backend must
// never fall back to weaker confinement.
package sandbox
