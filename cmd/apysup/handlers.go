package main

import (
	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/broker/handlers"
	"github.com/apysup/apysup/plan"
)

// buildHandlers makes the host's handler table for a manifest (every kind
// of broker/handlers: builtin, exec, http, kv). A config or grant problem
// is refused, with its manifest path, before anything runs.
//
// The CLI binds one Plan per process, so the handlers' resources (SQLite
// files, idle HTTP connections) live until the process exits; committed
// SQLite transactions are durable without a Close. A caller that builds
// handlers repeatedly in one process should call handlers.Build itself and
// close what it returns.
func buildHandlers(m *plan.Manifest) (*broker.Handlers, error) {
	hs, _, err := handlers.Build(m, handlers.Options{})
	if err != nil {
		return nil, err
	}
	return hs, nil
}
