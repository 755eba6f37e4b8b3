package rpc

import (
	"bytes"
	"crypto/sha256"

	"github.com/apysup/apysup/internal/canonjson"
)

// callState is where one call id stands in a channel's idempotency table.
type callState int

const (
	callInFlight callState = iota
	callCompleted
)

type callEntry struct {
	// The request's identity is its request digest (apysup.request.v1 over
	// the canonical frame). Canonicalising every frame would cost more than
	// the rest of the registry, and a retry sends the same bytes: so the
	// table keeps the frame and its plain hash, and canonicalises only when
	// a repeat is spelled differently (sameRequest).
	sum      [sha256.Size]byte
	frame    []byte
	state    callState
	response []byte // the Broker's response, once completed
}

// callTable remembers every call id a channel has seen, bounded by count
// and by the bytes of frames and cached responses. It is guarded by
// Channel.mu.
type callTable struct {
	entries     map[string]*callEntry
	cachedBytes int64
}

// admission says what to do with a request for a call id.
type admission int

const (
	admitDispatch admission = iota // new id: this request dispatches
	admitInFlight                  // same id, still dispatching (or unknown)
	admitReplay                    // same id, completed: replay the response
	admitFull                      // new id, but the table is full
	admitCompare                   // same id, other bytes: compare canonical forms first
	admitRevoked                   // the channel was revoked or closed meanwhile
)

// begin records callID when it is new and the limits allow, and reports
// what the request must do. For admitReplay it returns the cached response;
// for admitCompare the entry whose frame must be compared (sameRequest,
// outside the lock), after which the caller asks again with known=true.
func (t *callTable) begin(callID string, frame []byte, sum [sha256.Size]byte, known bool, limits ChannelLimits) (admission, *callEntry) {
	if e, ok := t.entries[callID]; ok {
		switch {
		case e.sum != sum && !known:
			return admitCompare, e
		case e.state == callCompleted:
			return admitReplay, e
		default:
			return admitInFlight, e
		}
	}
	if len(t.entries) >= limits.MaxCalls || t.cachedBytes >= limits.MaxCachedBytes {
		return admitFull, nil
	}
	if t.entries == nil {
		t.entries = make(map[string]*callEntry)
	}
	e := &callEntry{sum: sum, frame: bytes.Clone(frame), state: callInFlight}
	t.entries[callID] = e
	t.cachedBytes += int64(len(frame))
	return admitDispatch, e
}

// complete stores the Broker's response for callID. An id whose dispatch
// failed is never completed: it stays in flight, because the handler may
// have acted and a retry must not dispatch again.
func (t *callTable) complete(callID string, response []byte) {
	e := t.entries[callID]
	e.state = callCompleted
	e.response = response
	t.cachedBytes += int64(len(response))
}

// forget drops callID: the Broker refused the call before admitting it
// (SPEC.md section 5 steps 1-3), so the id was never spent and a later call
// may use it, exactly as when the guest calls the Broker directly (wazero).
func (t *callTable) forget(callID string) {
	if e, ok := t.entries[callID]; ok {
		t.cachedBytes -= int64(len(e.frame))
		delete(t.entries, callID)
	}
}

// sameRequest reports whether two frames are the same request: equal in
// canonical form. The frames are immutable, so this runs without the
// channel's lock.
func sameRequest(a, b []byte) bool {
	ca, err := canonjson.Canonical(a)
	if err != nil {
		return false
	}
	cb, err := canonjson.Canonical(b)
	return err == nil && bytes.Equal(ca, cb)
}
