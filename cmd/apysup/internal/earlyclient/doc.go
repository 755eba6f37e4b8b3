// Package earlyclient runs `apysup run --server unix:PATH` from its
// package init function, before the rest of the binary initialises.
//
// A client process of an `apysup serve` does little: it sends the script,
// passes the output events to the user's streams and prints the summary.
// Yet every process of the apysup binary pays the package inits of
// everything linked into it first (the JSON Schema library compiling five
// drafts' metaschemas, SQLite, protobuf, Prometheus: STARTUP.md), more
// than the run itself takes on a warm server. Go initialises a package
// once its imports are, choosing the first by import path among those
// ready; this package imports only the standard library's early packages
// (no net, no net/http) and report, so its init runs before those, and a
// run it takes ends the process there.
//
// It takes a run only when its command line and environment are the
// plainest form, the one whose request it can build exactly as the full
// client does: `apysup run [--server unix:PATH] [--backend native|wazero]
// -c CODE|SCRIPT [ARGS...]` with the server from the flag or
// APYSUP_SERVER, no other flag, no
// APYSUP_* setting and no config file. Anything else (and a server it
// cannot connect to, before anything is sent) it leaves to the full
// client in package main, which reports it as always. The summary, the
// exit status and the guest's streams are package report's, shared with
// the full client. It must never import a package of the project's other
// than report and sse, nor net or net/http.
package earlyclient
