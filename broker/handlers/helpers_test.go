package handlers

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/plan"
)

// capability is one manifest capability entry for tests.
type capability struct {
	name, effect, playback string
	kind, id, config       string // config "" means no config field
	policy                 string // the grant policy; "" means {}
}

func (c capability) json() string {
	effect, playback, id := c.effect, c.playback, c.id
	if effect == "" {
		effect = "read"
	}
	if playback == "" {
		playback = "live"
	}
	if id == "" {
		id = "t"
	}
	config := ""
	if c.config != "" {
		config = `,"config":` + c.config
	}
	return fmt.Sprintf(`{"name":%q,"version":"1","effect":%q,"playback":%q,
		"handler":{"kind":%q,"id":%q,"version":"1"%s},
		"input_schema":{"type":"object"},"output_schema":{}}`, c.name, effect, playback, c.kind, id, config)
}

func manifestOf(t testing.TB, caps ...capability) *plan.Manifest {
	t.Helper()
	var cs, gs []string
	for _, c := range caps {
		cs = append(cs, c.json())
		policy := c.policy
		if policy == "" {
			policy = "{}"
		}
		gs = append(gs, fmt.Sprintf(`{"capability":%q,"policy":%s}`, c.name, policy))
	}
	doc := `{"schema_version":"apysup.manifest.v1","max_calls":64,"capabilities":[` + strings.Join(cs, ",") +
		`],"grants":[` + strings.Join(gs, ",") + `]}`
	m, err := plan.ParseManifest([]byte(doc))
	if err != nil {
		t.Fatalf("manifest: %v\n%s", err, doc)
	}
	return m
}

// build builds handlers for caps and closes them when the test ends.
func build(t testing.TB, opts Options, caps ...capability) (*broker.Handlers, error) {
	t.Helper()
	hs, closer, err := Build(manifestOf(t, caps...), opts)
	if err == nil {
		t.Cleanup(func() {
			if err := closer.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		})
	}
	return hs, err
}

// handlerOf builds one capability and returns its handler, as Build would
// register it.
func handlerOf(t testing.TB, opts Options, c capability) any {
	t.Helper()
	m := manifestOf(t, c)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	b := &builder{opts: opts, dbs: map[string]*sql.DB{}}
	t.Cleanup(func() { b.Close() })
	var h any
	if g, grantPath := b.grant("capabilities[0].handler", m, m.Capabilities[0]); g != nil {
		h = b.handler("capabilities[0].handler", m.Capabilities[0], g, grantPath)
	}
	if h == nil {
		t.Fatalf("build: %v", b.problems)
	}
	return h
}

// problemAt reports whether err holds a problem with code at path.
func problemAt(err error, code, path string) bool {
	var ps plan.Problems
	if !errors.As(err, &ps) {
		return false
	}
	for _, p := range ps {
		if p.Code == code && p.Path == path {
			return true
		}
	}
	return false
}

// runBroker seals caps, builds their handlers and returns a direct-surface
// broker over them.
func runBroker(t testing.TB, opts Options, caps ...capability) *broker.Broker {
	t.Helper()
	m := manifestOf(t, caps...)
	p, err := m.Seal(Checker{})
	if err != nil {
		t.Fatalf("seal: %v", err)
	}
	b, _ := brokerOf(t, m, p, opts)
	return b
}

// brokerOf builds m's handlers and returns a direct-surface broker of p
// (m sealed) over them, and the handlers.
func brokerOf(t testing.TB, m *plan.Manifest, p *plan.Plan, opts Options) (*broker.Broker, *broker.Handlers) {
	t.Helper()
	hs, closer, err := Build(m, opts)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	t.Cleanup(func() { closer.Close() })
	b, err := broker.New(broker.Config{Plan: p, RunID: "run-1", Surface: plan.SurfaceDirect, Handlers: hs})
	if err != nil {
		t.Fatalf("broker: %v", err)
	}
	return b, hs
}

type brokerResponse struct {
	Status    string          `json:"status"`
	ErrorCode string          `json:"error_code"`
	Message   string          `json:"message"`
	Result    json.RawMessage `json:"result"`
}

// brokerCall sends one direct call and decodes the response.
func brokerCall(t testing.TB, b *broker.Broker, n int, capability, args string) brokerResponse {
	t.Helper()
	frame := fmt.Sprintf(`{"call_id":"capability-%d","capability":%q,"arguments":%s}`, n, capability, args)
	var r brokerResponse
	if err := json.Unmarshal(b.Call(context.Background(), []byte(frame)).AppendJSON(nil), &r); err != nil {
		t.Fatalf("response: %v", err)
	}
	return r
}
