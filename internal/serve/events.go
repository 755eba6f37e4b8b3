package serve

import (
	"encoding/json"
	"sync"
)

// Server-Sent Event names of GET /v1/runs/{id}/events.
const (
	EventState    = "state"    // {"state": "running"}: the run left the queue
	EventLedger   = "ledger"   // a broker.Event of the run's hash-chained ledger, as it is appended
	EventApproval = "approval" // a broker.ApprovalRecord that changed (waiting, decided, dispatched)
	EventStdout   = "stdout"   // {"data": "..."}: a chunk of the guest's stdout
	EventStderr   = "stderr"   // {"data": "..."}: a chunk of the guest's stderr
	EventResult   = "result"   // the RunResult; always the last event
	EventLagged   = "lagged"   // {"error_code": "events_lagged"}: this stream fell behind and ends; GET the run
)

// CodeEventsLagged ends a stream whose reader did not keep up.
const CodeEventsLagged = "events_lagged"

// maxHistory bounds the events a run keeps for a stream that starts
// late; past it, later events go to live streams only (the result is
// always kept).
const maxHistory = 4096

// subscriberQueue is how far a stream may fall behind before it is ended
// with a lagged event.
const subscriberQueue = 512

// streamEvent is one SSE event: its name and JSON data.
type streamEvent struct {
	Seq  int
	Name string
	Data json.RawMessage
}

// runEvents fans a run's events out to its streams. It never blocks the
// run: a stream that falls behind is ended.
type runEvents struct {
	mu      sync.Mutex
	history []streamEvent
	seq     int
	subs    map[chan streamEvent]struct{}
	ended   bool
}

func newRunEvents() *runEvents {
	return &runEvents{subs: map[chan streamEvent]struct{}{}}
}

func (h *runEvents) publish(name string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended {
		return
	}
	h.seq++
	ev := streamEvent{Seq: h.seq, Name: name, Data: data}
	if len(h.history) < maxHistory || name == EventResult {
		h.history = append(h.history, ev)
	}
	for ch := range h.subs {
		select {
		case ch <- ev:
		default: // lagged: its stream ends without the result
			delete(h.subs, ch)
			close(ch)
		}
	}
	if name == EventResult {
		h.ended = true
		for ch := range h.subs {
			close(ch)
		}
		clear(h.subs)
	}
}

// subscribe returns what happened so far and a channel of what follows,
// closed after the result (or when the stream lags); cancel ends it early.
func (h *runEvents) subscribe() (past []streamEvent, live <-chan streamEvent, cancel func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	past = append([]streamEvent(nil), h.history...)
	ch := make(chan streamEvent, subscriberQueue)
	if h.ended {
		close(ch)
		return past, ch, func() {}
	}
	h.subs[ch] = struct{}{}
	return past, ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, ok := h.subs[ch]; ok {
			delete(h.subs, ch)
			close(ch)
		}
	}
}
