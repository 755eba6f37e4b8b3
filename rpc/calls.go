package rpc

// callState is where one call id stands in a channel's idempotency table.
type callState int

const (
	callInFlight callState = iota
	callCompleted
)

type callEntry struct {
	digest   string
	state    callState
	response []byte // the Broker's response, once completed
}

// callTable remembers every call id a channel has seen, bounded by count
// and by the bytes of cached responses. It is guarded by Channel.mu.
type callTable struct {
	entries     map[string]*callEntry
	cachedBytes int64
}

// admission says what to do with a request for a call id.
type admission int

const (
	admitDispatch admission = iota // new id: this request dispatches
	admitMismatch                  // same id, different request digest
	admitInFlight                  // same id, still dispatching (or unknown)
	admitReplay                    // same id, completed: replay the response
	admitFull                      // new id, but the table is full
)

// begin records callID with digest when it is new and the limits allow, and
// reports what the request must do. For admitReplay it returns the cached
// response.
func (t *callTable) begin(callID, digest string, limits ChannelLimits) (admission, []byte) {
	if e, ok := t.entries[callID]; ok {
		switch {
		case e.digest != digest:
			return admitMismatch, nil
		case e.state == callCompleted:
			return admitReplay, e.response
		default:
			return admitInFlight, nil
		}
	}
	if len(t.entries) >= limits.MaxCalls || t.cachedBytes >= limits.MaxCachedBytes {
		return admitFull, nil
	}
	if t.entries == nil {
		t.entries = make(map[string]*callEntry)
	}
	t.entries[callID] = &callEntry{digest: digest, state: callInFlight}
	return admitDispatch, nil
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
