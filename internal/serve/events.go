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

// maxHistory and maxHistoryBytes bound the events a run keeps for a
// stream that starts late, by count and by the bytes of their data; past
// either, later events go to live streams only (the result is always
// kept). A finished run is kept for GET with its history (MaxFinished of
// them), so the bytes bound is what keeps the server's memory bounded
// whatever its runs print: 20 runs printing 32 MiB each grew a server by
// 226 MiB before it (TestServeLoadThenKill at 1,000 runs).
const (
	maxHistory      = 4096
	maxHistoryBytes = 256 << 10
)

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
	bytes   int // of the history's data
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
	if len(h.history) < maxHistory && h.bytes+len(data) <= maxHistoryBytes || name == EventResult {
		h.history = append(h.history, ev)
		h.bytes += len(data)
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

// historyBytes is the size of the kept events' data.
func (h *runEvents) historyBytes() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.bytes
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
