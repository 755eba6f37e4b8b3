package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/apysup/apysup/internal/serve/sse"
)

// Client speaks the API: to "unix:PATH" or "http://HOST:PORT" (with a
// bearer token for TCP).
type Client struct {
	base  string // http://apysup or the URL
	token string
	hc    *http.Client
}

// NewClient returns a client of the server at addr.
func NewClient(addr, token string) (*Client, error) {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok && path != "" {
		tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}}
		return &Client{base: "http://apysup", hc: &http.Client{Transport: tr}}, nil
	}
	u, err := url.Parse(addr)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("server %q: want unix:PATH or http://HOST:PORT", addr)
	}
	return &Client{base: strings.TrimSuffix(addr, "/"), token: token, hc: &http.Client{}}, nil
}

// Close releases idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

func (c *Client) do(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		e := &Error{}
		if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(e); err != nil || e.Code == "" {
			return nil, fmt.Errorf("serve: %s %s: HTTP %d", method, path, resp.StatusCode)
		}
		return nil, e
	}
	return resp, nil
}

func (c *Client) call(ctx context.Context, method, path string, body, out any) error {
	resp, err := c.do(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(out)
}

// Run runs a request and waits for its result. Cancelling ctx cancels the
// run (the server sees the client leave).
func (c *Client) Run(ctx context.Context, req RunRequest) (*RunResult, error) {
	var res RunResult
	if err := c.call(ctx, http.MethodPost, "/v1/runs", req, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Start admits a run and returns its id at once.
func (c *Client) Start(ctx context.Context, req RunRequest) (string, error) {
	var acc RunAccepted
	if err := c.call(ctx, http.MethodPost, "/v1/runs?wait=false", req, &acc); err != nil {
		return "", err
	}
	return acc.RunID, nil
}

// Stream runs a request and streams its events from its start, ending
// after the result (POST /v1/runs?wait=events): the run's id, and its
// events. The run is the stream's: leaving it (cancelling ctx, or a
// client that dies) cancels the run.
func (c *Client) Stream(ctx context.Context, req RunRequest) (string, iter.Seq2[Event, error], error) {
	resp, err := c.do(ctx, http.MethodPost, "/v1/runs?wait="+waitEvents, req)
	if err != nil {
		return "", nil, err
	}
	id := resp.Header.Get(RunIDHeader)
	return id, func(yield func(Event, error) bool) {
		defer resp.Body.Close()
		for ev, err := range sse.Read(resp.Body) {
			if !yield(ev, err) || err != nil || ev.Name == EventResult {
				return
			}
		}
	}, nil
}

// Cancel cancels a run.
func (c *Client) Cancel(ctx context.Context, runID string) error {
	var st RunState
	return c.call(ctx, http.MethodPost, "/v1/runs/"+url.PathEscape(runID)+"/cancel", nil, &st)
}

// SealPlan seals a manifest on the server.
func (c *Client) SealPlan(ctx context.Context, manifest json.RawMessage) (*PlanResponse, error) {
	var out PlanResponse
	if err := c.call(ctx, http.MethodPost, "/v1/plans", PlanRequest{Manifest: manifest}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Event is one event of a run's stream: its name (EventLedger,
// EventStdout, ..., EventResult last) and its JSON data.
type Event = sse.Event

// Events streams a run's events from its start, ending after the result.
func (c *Client) Events(ctx context.Context, runID string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		resp, err := c.do(ctx, http.MethodGet, "/v1/runs/"+url.PathEscape(runID)+"/events", nil)
		if err != nil {
			yield(Event{}, err)
			return
		}
		defer resp.Body.Close()
		for ev, err := range sse.Read(resp.Body) {
			if !yield(ev, err) || err != nil || ev.Name == EventResult {
				return
			}
		}
	}
}
