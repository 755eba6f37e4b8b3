package broker

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/apysup/apysup/internal/canonjson"
)

// Event kinds of a run's ledger, in the order a run produces them.
const (
	EventRunAdmitted     = "run_admitted"     // the run's choices and its Plan
	EventCallIntent      = "call_intent"      // a frame arrived
	EventCallRefused     = "call_refused"     // refused before any receipt (malformed, reused id, ...)
	EventCallAdmitted    = "call_admitted"    // admitted: its request digest is known
	EventApprovalDecided = "approval_decided" // a person's (or the policy's) decision
	EventCallDispatched  = "call_dispatched"  // the handler is about to run: the commit point
	EventCallReceipt     = "call_receipt"     // the receipt is written
	EventWorkspace       = "workspace"        // the workspace's disposition
	EventRunEnded        = "run_ended"        // the run's status, last
)

// MaxLedgerEvents bounds a run's ledger. A guest that sends frames without
// end cannot grow it: past the bound, events are counted, and the count is
// bound into the ledger by the run_ended event (events_omitted). The run's
// closing events always fit.
const MaxLedgerEvents = 4096

const closingEvents = 2 // workspace, run_ended

// Event is one entry of a run's hash-chained ledger. Its body holds
// digests, ids, codes and choices only: never raw arguments, results or
// policies (SPEC.md invariant 7). Digest is the apysup.event.v1 digest of
// the event without it; Prev is the previous event's digest ("" first).
type Event struct {
	Seq    int               `json:"seq"`
	Prev   string            `json:"prev"`
	Kind   string            `json:"kind"`
	Body   map[string]string `json:"body"`
	Digest string            `json:"digest"`
}

func (e Event) computeDigest() string {
	var buf [512]byte // on the stack: the digest keeps nothing of it
	return canonjson.Digest(canonjson.DomainEvent, e.appendCanonical(buf[:0]))
}

// appendCanonical appends the RFC 8785 form of the event without its digest,
// {"body":{...},"kind":...,"prev":...,"seq":N}, written directly: events
// are appended on the call path, four or more per call, and a generic
// marshal plus JCS transform cost four times the rest of Broker.Call.
// Every key is the host's own ASCII, so byte order is RFC 8785's order.
func (e Event) appendCanonical(b []byte) []byte {
	str := func(b []byte, s string) []byte {
		if !utf8.ValidString(s) { // ValidString's ASCII path is the fast one
			// U+FFFD for each byte that is no UTF-8, as encoding/json
			// writes an exported event: its digest is then recomputed
			// from what was exported (strings.ToValidUTF8 merges a run).
			s = strings.Map(func(r rune) rune { return r }, s)
		}
		return canonjson.AppendString(b, s)
	}
	var held [8]string // a call's events have at most five members
	keys := held[:0]
	size := len(`{"body":{},"kind":,"prev":,"seq":}`) + 2*len(`""`) + len(e.Kind) + len(e.Prev) + 20
	for k, v := range e.Body {
		keys = append(keys, k)
		size += len(`"":"",`) + len(k) + len(v)
	}
	sort.Strings(keys)
	b = slices.Grow(b, size) // enough, unless an escaped character lengthens a string
	b = append(b, `{"body":{`...)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = str(b, k)
		b = append(b, ':')
		b = str(b, e.Body[k])
	}
	b = append(b, `},"kind":`...)
	b = str(b, e.Kind)
	b = append(b, `,"prev":`...)
	b = str(b, e.Prev)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, int64(e.Seq), 10)
	return append(b, '}')
}

// Observer watches a run's events passively: it receives each event the
// ledger records, in order, from a bounded queue off the call path. An
// observer that blocks, fails or panics never delays or changes a call;
// events it missed are counted (Ledger.Missed).
type Observer interface {
	Observe(Event) error
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(Event) error

func (f ObserverFunc) Observe(e Event) error { return f(e) }

// ObserverQueue is how many events wait for a slow observer before the
// next ones are counted as missed.
const ObserverQueue = 256

// Ledger is a run's append-only event ledger. It is safe for concurrent
// use; Close stops the delivery to observers.
type Ledger struct {
	mu       sync.Mutex
	events   []Event
	omitted  int
	closed   bool
	watchers []*watcher
}

type watcher struct {
	o      Observer
	queue  chan Event
	mu     sync.Mutex
	missed int
}

// NewLedger starts an empty ledger that delivers its events to observers.
func NewLedger(observers ...Observer) *Ledger {
	l := &Ledger{}
	for _, o := range observers {
		w := &watcher{o: o, queue: make(chan Event, ObserverQueue)}
		l.watchers = append(l.watchers, w)
		go w.run()
	}
	return l
}

func (w *watcher) run() {
	for e := range w.queue {
		func() {
			defer func() { _ = recover() }()
			_ = w.o.Observe(e)
		}()
	}
}

// Append records one event and returns it. A call event past the bound is
// only counted; so is anything appended after run_ended.
func (l *Ledger) Append(kind string, body map[string]string) (Event, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	closing := kind == EventWorkspace || kind == EventRunEnded
	if l.ended() || (!closing && len(l.events) >= MaxLedgerEvents-closingEvents) {
		l.omitted++
		return Event{}, false
	}
	if body == nil {
		body = map[string]string{}
	}
	for k, v := range body {
		if v == "" {
			delete(body, k) // absent and empty are one thing
		}
	}
	if kind == EventRunEnded && l.omitted > 0 {
		body["events_omitted"] = fmt.Sprint(l.omitted)
	}
	e := Event{Seq: len(l.events) + 1, Kind: kind, Body: body}
	if n := len(l.events); n > 0 {
		e.Prev = l.events[n-1].Digest
	}
	e.Digest = e.computeDigest()
	l.events = append(l.events, e)
	if !l.closed {
		for _, w := range l.watchers {
			select {
			case w.queue <- e:
			default:
				w.mu.Lock()
				w.missed++
				w.mu.Unlock()
			}
		}
	}
	return e, true
}

func (l *Ledger) ended() bool {
	n := len(l.events)
	return n > 0 && l.events[n-1].Kind == EventRunEnded
}

// Events returns a copy of the ledger.
func (l *Ledger) Events() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Event{}, l.events...)
}

// Head is the digest of the last event ("" when empty).
func (l *Ledger) Head() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.events); n > 0 {
		return l.events[n-1].Digest
	}
	return ""
}

// Missed is how many events observers missed, summed over observers.
func (l *Ledger) Missed() int {
	n := 0
	for _, w := range l.watchers {
		w.mu.Lock()
		n += w.missed
		w.mu.Unlock()
	}
	return n
}

// Close stops delivering events: queued ones still reach their observer,
// later ones are not sent. It does not wait for observers.
func (l *Ledger) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	for _, w := range l.watchers {
		close(w.queue)
	}
}

// LedgerProblem is one reason a ledger does not verify.
type LedgerProblem struct {
	Seq    int    `json:"seq,omitempty"`
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// Codes of ledger problems.
const (
	LedgerEmpty       = "ledger_empty"
	LedgerSequence    = "ledger_sequence"     // a seq out of order: an event removed or reordered
	LedgerChain       = "ledger_chain_broken" // prev is not the previous event's digest
	LedgerDigest      = "ledger_digest"       // an event's digest does not recompute: altered
	LedgerHead        = "ledger_head"         // the head is not the last event's digest
	LedgerShape       = "ledger_shape"        // run_admitted not first, run_ended not last
	LedgerPlan        = "ledger_plan"         // run_admitted names another Plan
	LedgerRun         = "ledger_run"          // run_admitted names another run
	LedgerStatus      = "ledger_status"       // run_ended disagrees with the result's status, error code, exit code or receipt count
	LedgerReceipts    = "ledger_receipts"     // receipts and call_receipt events disagree
	LedgerUnknownKind = "ledger_unknown_kind" // an event kind this version does not know
)

var eventKinds = map[string]bool{
	EventRunAdmitted: true, EventCallIntent: true, EventCallRefused: true, EventCallAdmitted: true,
	EventApprovalDecided: true, EventCallDispatched: true, EventCallReceipt: true, EventWorkspace: true, EventRunEnded: true,
}

// VerifyLedger recomputes the chain of events against head: every digest,
// every link, the sequence, the first and last event. It says nothing
// about receipts; VerifyRunLedger does.
func VerifyLedger(events []Event, head string) []LedgerProblem {
	var out []LedgerProblem
	if len(events) == 0 {
		return []LedgerProblem{{Code: LedgerEmpty, Detail: "no events"}}
	}
	prev := ""
	for i, e := range events {
		if e.Seq != i+1 {
			out = append(out, LedgerProblem{Seq: e.Seq, Code: LedgerSequence, Detail: fmt.Sprintf("event %d has seq %d", i+1, e.Seq)})
		}
		if e.Prev != prev {
			out = append(out, LedgerProblem{Seq: e.Seq, Code: LedgerChain, Detail: "prev is not the previous event's digest"})
		}
		if e.computeDigest() != e.Digest {
			out = append(out, LedgerProblem{Seq: e.Seq, Code: LedgerDigest, Detail: "the digest does not recompute: the event was altered"})
		}
		if !eventKinds[e.Kind] {
			out = append(out, LedgerProblem{Seq: e.Seq, Code: LedgerUnknownKind, Detail: "unknown kind"})
		}
		prev = e.Digest
	}
	if head != prev {
		out = append(out, LedgerProblem{Code: LedgerHead, Detail: "the head is not the last event's digest"})
	}
	// A run refused before it was admitted has run_ended alone.
	refusedEarly := len(events) == 1 && events[0].Kind == EventRunEnded
	if events[0].Kind != EventRunAdmitted && !refusedEarly {
		out = append(out, LedgerProblem{Seq: events[0].Seq, Code: LedgerShape, Detail: "the first event is not run_admitted"})
	}
	if last := events[len(events)-1]; last.Kind != EventRunEnded {
		out = append(out, LedgerProblem{Seq: last.Seq, Code: LedgerShape, Detail: "the last event is not run_ended"})
	}
	return out
}

// RunEvidence is what a run's result says besides its ledger, for
// VerifyRunLedger. Every field is checked: a result's exit code of 0 is
// compared like any other.
type RunEvidence struct {
	RunID              string
	PlanSHA256         string
	Status             string
	ErrorCode          string
	ExitCode           int
	Receipts           []Receipt
	WorkspaceReceiptID string // "" when the run has no workspace receipt
}

// VerifyRunLedger verifies the chain (VerifyLedger) and its agreement with
// the rest of the run's result: the run and Plan of run_admitted, the
// status, error code, exit code and receipt count of run_ended, the
// receipts (each call_receipt event names the receipt of
// the same operation, in order, and every receipt has one), the workspace
// receipt, and that every admitted call ended in exactly one receipt or a
// grant refusal.
func VerifyRunLedger(events []Event, head string, run RunEvidence) []LedgerProblem {
	out := VerifyLedger(events, head)
	if len(events) == 0 {
		return out
	}
	add := func(seq int, code, format string, args ...any) {
		out = append(out, LedgerProblem{Seq: seq, Code: code, Detail: fmt.Sprintf(format, args...)})
	}
	var receiptEvents []Event
	open := map[string]int{} // admitted call id -> seq of call_admitted, until it ends
	workspace := ""
	for _, e := range events {
		switch e.Kind {
		case EventRunAdmitted:
			if e.Body["plan_sha256"] != run.PlanSHA256 {
				add(e.Seq, LedgerPlan, "run_admitted names another Plan")
			}
			if e.Body["run_id"] != run.RunID {
				add(e.Seq, LedgerRun, "run_admitted names run %q, the result %q", e.Body["run_id"], run.RunID)
			}
		case EventRunEnded:
			for _, f := range []struct{ name, ledger, result string }{
				{"status", e.Body["status"], run.Status},
				{"error code", e.Body["error_code"], run.ErrorCode},
				{"exit code", e.Body["exit_code"], strconv.Itoa(run.ExitCode)},
				{"receipt count", e.Body["receipts"], strconv.Itoa(len(run.Receipts))},
			} {
				if f.ledger != f.result {
					add(e.Seq, LedgerStatus, "run_ended's %s is %q, the result's %q", f.name, f.ledger, f.result)
				}
			}
		case EventCallAdmitted:
			open[e.Body["call_id"]] = e.Seq
		case EventCallReceipt:
			receiptEvents = append(receiptEvents, e)
			if _, ok := open[e.Body["call_id"]]; !ok {
				add(e.Seq, LedgerReceipts, "a receipt for a call that was not admitted")
			}
			delete(open, e.Body["call_id"])
		case EventCallRefused:
			if _, ok := open[e.Body["call_id"]]; ok && e.Body["error_code"] == CodeGrantDenied {
				delete(open, e.Body["call_id"])
			}
		case EventWorkspace:
			workspace = e.Body["receipt_id"]
		}
	}
	omitted := events[len(events)-1].Body["events_omitted"] != ""
	if len(open) > 0 && !omitted {
		add(0, LedgerReceipts, "%d admitted calls have neither a receipt nor a grant refusal", len(open))
	}
	if len(receiptEvents) != len(run.Receipts) && !omitted {
		add(0, LedgerReceipts, "%d call_receipt events, %d receipts", len(receiptEvents), len(run.Receipts))
	}
	for i := 0; i < len(receiptEvents) && i < len(run.Receipts); i++ {
		e, r := receiptEvents[i], run.Receipts[i]
		if e.Body["receipt_id"] != r.ReceiptID || e.Body["call_id"] != r.CallID || e.Body["outcome"] != r.Outcome {
			add(e.Seq, LedgerReceipts, "call_receipt event %d does not name receipt %d", i+1, i)
		}
	}
	if workspace != run.WorkspaceReceiptID {
		add(0, LedgerReceipts, "the workspace event and the workspace receipt disagree")
	}
	return out
}
