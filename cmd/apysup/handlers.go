package main

import (
	"io"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/broker/handlers"
	"github.com/apysup/apysup/plan"
)

// seal is the one validation of a manifest that both `plan seal` and
// `run` pass through (plan.Manifest.Validate with the handlers of
// broker/handlers), so that a manifest that seals is one that runs.
func seal(m *plan.Manifest) (*plan.Plan, error) {
	return m.Seal(handlers.Checker{})
}

// buildHandlers makes the host's handler table for a manifest (every kind
// of broker/handlers: builtin, exec, http, kv). A config or grant problem
// is refused, with its manifest path, before anything runs. The Closer
// releases the handlers' resources (SQLite files, idle connections).
func buildHandlers(m *plan.Manifest) (*broker.Handlers, io.Closer, error) {
	return handlers.Build(m, handlers.Options{})
}
