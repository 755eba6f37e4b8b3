// Package supervisor runs one script under one sealed Plan end to end:
// it builds the run's Broker, opens the run's capability channel (native)
// or host import (wazero), runs the guest on the selected backend,
// verifies the receipts and the guest's output, disposes of the workspace
// and returns the RunResult of SPEC.md section 10.
//
// It must never fall back from an unavailable backend to another or to
// weaker confinement, never merge guest-authored host fields into a
// result, and never leave a socket, directory, process or cgroup behind.
package supervisor
