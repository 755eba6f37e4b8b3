// Package plan owns the authority root of apysup: capability Specs and
// Grants registered by the host and sealed, once, into an immutable Plan
// whose identity is the domain-separated digest of its evidence document.
//
// It also owns presentation (tool schemas and the generated Python prelude),
// which is a projection of the Plan and grants nothing: presentation never
// changes the Plan identity.
//
// It must never expose a Grant's raw policy: not in the evidence document,
// tool schemas, prelude, errors or logs. Only the policy digest leaves a
// Grant.
package plan
