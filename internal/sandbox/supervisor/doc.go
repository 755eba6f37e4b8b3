// Package supervisor runs one script under one sealed Plan end to end:
// it builds the run's Broker, opens the run's capability channel (native)
// or host import (wazero), runs the guest on the selected backend,
// verifies the receipts and the guest's output, disposes of the workspace
// and returns the RunResult of SPEC.md section 10.
//
// The warm pool (Config.NativePool) keeps native sandboxes started ahead
// of their runs, with every namespace, cgroup, mount and filter in place
// and the interpreter waiting for its job; a run takes one, hands its job
// over, and the sandbox is destroyed after the RunResult is made, in the
// background (Close waits for it). Sandboxes are kept per limits class
// (the limits with defaults applied, the workspace bounds left out):
// NativePoolLimits is the class started at once, NativePoolClasses (0:
// one) bounds the classes, made on a run's demand while there is room,
// and NativePoolIdle (0: 5 minutes) is how long an unused sandbox lives
// and how long a class is refilled after its last run. A run that finds
// its class empty starts its own sandbox, confined the same way.
// Prepare starts the pool before the first run; PoolState reports
// it (for health and metrics). Each pooled sandbox holds a host uid pair
// and about 10 MiB.
//
// It must never fall back from an unavailable backend to another or to
// weaker confinement, never merge guest-authored host fields into a
// result, and never leave a socket, directory, process or cgroup behind.
package supervisor
