// Package plan owns the authority root of apysup: capability Specs and
// Grants registered by the host and sealed, once, into an immutable Plan
// whose identity is the domain-separated digest of its evidence document.
//
// It owns the grant policy language (grant.go): a policy is read strictly
// when it is bound (an unknown or invalid field is refused with its JSON
// path), its arguments schema is compiled once, and a sealed Plan hands
// each capability's Policy to the host's Broker, which enforces it at
// admission, and to the handlers, which build within its handler section.
//
// It also owns presentation (tool schemas and the generated Python prelude),
// which is a projection of the Plan and grants nothing: presentation never
// changes the Plan identity.
//
// It must never expose a Grant's raw policy: not in the evidence document,
// tool schemas, prelude, errors or logs. Only the policy digest leaves a
// Grant.
package plan
