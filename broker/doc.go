// Package broker owns the single dispatch seam of apysup. Every capability
// call from every backend (native RPC, the wazero host import) ends in
// Broker.Call, and only the Broker decides whether a handler runs.
//
// It admits or refuses each call in the order of SPEC.md section 5, waits
// for human approval inside the same call where the Plan requires it,
// dispatches a handler at most once per call id, and writes host-authored
// receipts bound to the Plan by digest.
//
// It must never dispatch twice for one call id, never cache or replay an
// approved result, never put arguments, results, grants or credentials in a
// receipt, record, log or error (digests only), and never let an observer
// change what is dispatched.
package broker
