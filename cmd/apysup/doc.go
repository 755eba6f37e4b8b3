// Command apysup runs untrusted, agent-written Python under a sealed
// capability Plan: `apysup run` (natively confined or under wazero), `plan`
// (seal, tools, prelude), `approvals`, `receipts verify`, `doctor`,
// `seccomp export` and `config show`. docs/cli.md is generated from these
// definitions (make docs).
//
// This package is thin: it parses flags, selects settings (flag > APYSUP_*
// environment > config file > default), wires the packages together and
// prints. It must never decide admission or confinement itself.
package main
