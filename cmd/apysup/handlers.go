package main

import (
	"io"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/broker/handlers"
	"github.com/apysup/apysup/plan"
)

// buildHandlers makes the host's handler table for a manifest (every kind
// of broker/handlers: builtin, exec, http, kv). A config or grant problem
// is refused, with its manifest path, before anything runs. The Closer
// releases the handlers' resources (SQLite files, idle connections).
func buildHandlers(m *plan.Manifest) (*broker.Handlers, io.Closer, error) {
	return handlers.Build(m, handlers.Options{})
}
