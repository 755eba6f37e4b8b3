package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/apysup/apysup/plan"
)

// Handler performs one capability call. args is the canonical JSON object
// the input schema admitted; the result must be JSON.
type Handler interface {
	Call(ctx context.Context, args json.RawMessage) (json.RawMessage, error)
}

// EvidenceHandler is a captured-playback handler: it returns the result and
// the transport evidence of the same call frame.
type EvidenceHandler interface {
	CallWithEvidence(ctx context.Context, args json.RawMessage) (json.RawMessage, TransportEvidence, error)
}

// GrantChecker is implemented by a handler whose grant section constrains
// each call's arguments in a way only the handler understands (kv's
// key_prefix). The Broker asks it at admission, after the grant's
// arguments schema and before approval: a refusal is grant_denied, and the
// handler is never called. args are the canonical arguments decoded as for
// the input schema; pointer is the JSON Pointer of the refused argument and
// must be made of names the handler defines, never of guest input.
type GrantChecker interface {
	CheckGrant(args any) (pointer string, ok bool)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, args json.RawMessage) (json.RawMessage, error)

func (f HandlerFunc) Call(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	return f(ctx, args)
}

// TransportEvidence describes what a captured handler saw on the wire, by
// digest: never an endpoint, header or credential.
type TransportEvidence struct {
	Kind       string `json:"kind"` // "http"
	Status     int    `json:"status"`
	MediaType  string `json:"media_type"`
	BodyBytes  int64  `json:"body_bytes"`
	BodySHA256 string `json:"body_sha256"`
}

// Handlers maps handler identities to implementations. The host builds it;
// the guest never sees it.
type Handlers struct {
	mu sync.RWMutex
	m  map[plan.HandlerIdentity]any
}

// NewHandlers returns an empty handler table.
func NewHandlers() *Handlers { return &Handlers{m: make(map[plan.HandlerIdentity]any)} }

// Add registers h (a Handler or an EvidenceHandler) under id.
func (hs *Handlers) Add(id plan.HandlerIdentity, h any) error {
	switch h.(type) {
	case Handler, EvidenceHandler:
	default:
		return fmt.Errorf("broker: %s: not a Handler or EvidenceHandler", id)
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if _, dup := hs.m[id]; dup {
		return fmt.Errorf("broker: handler %s registered twice", id)
	}
	hs.m[id] = h
	return nil
}

func (hs *Handlers) lookup(id plan.HandlerIdentity) (any, bool) {
	hs.mu.RLock()
	defer hs.mu.RUnlock()
	h, ok := hs.m[id]
	return h, ok
}

// EchoIdentity is the identity of the built-in echo handler (config {}).
func EchoIdentity() plan.HandlerIdentity {
	id, err := plan.NewHandlerIdentity("builtin", "echo", "1", nil)
	if err != nil {
		panic(err) // constant input
	}
	return id
}

// Echo returns {"echo": <arguments>}; for examples and tests.
type Echo struct{}

func (Echo) Call(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{"echo":` + string(args) + `}`), nil
}
