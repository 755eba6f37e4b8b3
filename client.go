package apysup

import (
	"context"
	"iter"

	"github.com/apysup/apysup/internal/serve"
)

// Client runs scripts on an `apysup serve` server (docs/api.md) instead
// of in this process: a program that is not root, or not on Linux, or
// that wants the server's warm pool, sends its runs there.
type Client struct{ c *serve.Client }

// The API's documents, as the server reads and writes them.
type (
	// RemoteRequest is one run for a server: the script's text and
	// argv, its Plan (a manifest, or the plan_sha256 of one the server
	// sealed), limits, backend, surface, approval mode (deny, auto or
	// api), a workspace file map, and whether to export it.
	RemoteRequest = serve.RunRequest
	RemoteLimits  = serve.RunLimits
	// RemoteResult is the server's RunResult: the Result `apysup run
	// --json` prints, and the exported workspace when asked.
	RemoteResult = serve.RunResult
	// RemoteEvent is one event of a run's stream: Name is state, ledger,
	// approval, stdout, stderr, or result (last); Data is its JSON.
	RemoteEvent = serve.Event
	// RemoteError is a server's typed refusal (Code: overloaded,
	// invalid_request, plan_not_found, ...).
	RemoteError = serve.Error
)

// NewClient returns a client of the server at addr: unix:PATH, or
// http://HOST:PORT with the server's bearer token.
func NewClient(addr, token string) (*Client, error) {
	c, err := serve.NewClient(addr, token)
	if err != nil {
		return nil, err
	}
	return &Client{c: c}, nil
}

// Close releases the client's idle connections.
func (c *Client) Close() { c.c.Close() }

// Run runs a request and waits for its result. The error is a
// *RemoteError when the server refused the request; every ending of an
// admitted run is a result. Cancelling ctx cancels the run.
func (c *Client) Run(ctx context.Context, req RemoteRequest) (*RemoteResult, error) {
	return c.c.Run(ctx, req)
}

// Start admits a run and returns its id without waiting: follow it with
// Events.
func (c *Client) Start(ctx context.Context, req RemoteRequest) (string, error) {
	return c.c.Start(ctx, req)
}

// Events streams a run's events from its start, live, and ends after
// its result event.
func (c *Client) Events(ctx context.Context, runID string) iter.Seq2[RemoteEvent, error] {
	return c.c.Events(ctx, runID)
}
