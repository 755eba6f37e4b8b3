// Package handlers builds the host's handler table from a manifest: one
// handler per distinct handler identity, of four kinds.
//
//   - builtin: echo@1 and clock.now@1 (nondeterministic), no config.
//   - exec: a fixed host command (argv from config) that reads the canonical
//     arguments as JSON on stdin and writes one JSON value to stdout, in a
//     process group of its own with a scrubbed environment, a timeout and an
//     output bound. With a "provider" section the tool speaks the provider
//     protocol instead (docs/provider-protocol.md): the handler is a
//     broker.Provider and broker.Revoker, one run per operation.
//   - http: one request whose method, URL template and headers come from
//     config and whose destinations come from the http section of the
//     capability's grant (allowed_hosts, methods, path_prefixes); captured
//     playback with transport evidence.
//   - kv: get, put or list on a namespace of an embedded SQLite file, within
//     the kv section of the grant (namespace, key_prefix, read_only). With
//     "acceptance": "strict" it is a provider (broker.Provider,
//     broker.Revoker): the file is its own store, each call is accepted in
//     one transaction with an immutable decision receipt, and an epoch
//     registry in another file fences restores (docs/acceptance.md).
//
// It owns the validation of each kind's config (strict: unknown fields are
// refused with their manifest path), its check against the handler section
// of the capability's grant (the plan package reads and seals the grant;
// a config that does more than its grant allows is refused,
// config_not_granted), and the resources the handlers hold (SQLite files,
// HTTP connections), released by the Closer Build returns. The plan
// package binds each config into the handler identity by digest; Build
// checks that the config it reads is the one that digest names.
//
// It must never take a command line, URL, host, header or file path from
// the guest: guest arguments only fill placeholders (path and query,
// escaped), request bodies, stdin and keys. It must never put a grant
// policy, URL, header, command line, environment or stderr in a result,
// transport evidence or error: errors are *Error values whose text is a
// stable code and a fixed description. It must never follow a redirect,
// use a proxy, or connect anywhere the grant does not list, and never leave
// a process of an exec handler's group running after its call returns (a
// process that leaves the group with setsid is beyond its reach; exec runs
// tools the host chose, not guest code).
//
// Results: exec returns the command's JSON value; http returns
// {"status": N, "body": <JSON value or text>} (any status but a redirect);
// kv returns {"found", "key", "value"?} for get, {"key", "stored"} for put
// and {"keys", "truncated"} for list; builtin/echo returns {"echo": args}
// and builtin/clock.now {"unix_ms": N}.
package handlers
