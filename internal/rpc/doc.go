// Package rpc owns the native guest's only door out: the per-run capability
// channel (SPEC.md section 6). A Registry holds the open channels, each with
// its random credential, the run's ids, Plan digest, expiry, expected peer
// uid and a bounded call idempotency table; a Server speaks HTTP/1.1 on a
// per-run Unix socket and hands every request to Registry.Dispatch, which
// re-checks all of it and calls the Broker through a Dispatcher at most once
// per call id.
//
// It must never dispatch a call id twice (a retry gets a replay or
// "call_in_flight"), never say which part of a failed authentication was
// wrong, never log or return a credential, and never decide admission: what
// a call may do is the Broker's, and rpc forwards the guest's frame bytes
// unchanged.
//
// RunUnsandboxed runs the whole guest chain on the host, without any
// confinement, for tests and as the sandbox's building block.
//
// ApprovalServer is the other Unix-socket API here: the admin socket of
// `apysup run --approve socket:PATH`, through which another process of the
// same user lists, approves and rejects a run's pending approvals. It
// answers only a peer whose SO_PEERCRED uid is the supervisor's (or root),
// and shows argument previews only while a request waits.
package rpc
