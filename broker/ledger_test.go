package broker

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/plan"
)

// ledgerOfARun is the ledger of a small run: an admitted run, a refused
// frame, an ok call, a grant refusal, an unknown capability, the end.
func ledgerOfARun(t *testing.T) (*Ledger, RunEvidence) {
	t.Helper()
	f := newFixture(t, 8)
	l := NewLedger()
	b, err := New(Config{Plan: f.plan, RunID: "run-1", Surface: plan.SurfaceDirect, Handlers: f.handlers, Ledger: l})
	if err != nil {
		t.Fatal(err)
	}
	l.Append(EventRunAdmitted, map[string]string{"plan_sha256": f.plan.Identity(), "run_id": "run-1"})
	b.Call(context.Background(), []byte(`{not json`))
	b.Call(context.Background(), frameOf("capability-1", "echo", `{"x":1}`))
	b.Call(context.Background(), frameOf("capability-2", "limited", `{"city":"Berlin"}`))
	b.Call(context.Background(), frameOf("capability-3", "nope", `{}`))
	l.Append(EventRunEnded, map[string]string{"status": "ok", "exit_code": "0", "receipts": fmt.Sprint(len(b.Receipts()))})
	return l, RunEvidence{RunID: "run-1", PlanSHA256: f.plan.Identity(), Status: "ok", Receipts: b.Receipts()}
}

func codesOf(ps []LedgerProblem) []string {
	var codes []string
	for _, p := range ps {
		codes = append(codes, p.Code)
	}
	return codes
}

func TestLedgerVerifies(t *testing.T) {
	l, run := ledgerOfARun(t)
	events := l.Events()
	want := []string{EventRunAdmitted,
		EventCallIntent, EventCallRefused, // the malformed frame
		EventCallIntent, EventCallAdmitted, EventCallDispatched, EventCallReceipt, // ok
		EventCallIntent, EventCallAdmitted, EventCallRefused, // grant_denied, receipt-free
		EventCallIntent, EventCallAdmitted, EventCallReceipt, // unknown capability: a denied receipt
		EventRunEnded}
	if got := kindsOf(events); !slices.Equal(got, want) {
		t.Fatalf("events %v\nwant   %v", got, want)
	}
	if ps := VerifyRunLedger(events, l.Head(), run); len(ps) != 0 {
		t.Fatalf("problems %+v", ps)
	}
	for _, e := range events {
		for k, v := range e.Body {
			if strings.Contains(v, "Berlin") || k == "arguments" || k == "policy" {
				t.Errorf("event %d carries %s=%s", e.Seq, k, v)
			}
		}
	}
}

// TestLedgerFindsTampering: an event removed, reordered, altered or added,
// a wrong head, and a ledger that disagrees with the receipts, the Plan or
// the status are each found.
func TestLedgerFindsTampering(t *testing.T) {
	l, run := ledgerOfARun(t)
	events, head := l.Events(), l.Head()
	n := len(events)
	clone := func() []Event {
		out := make([]Event, n)
		for i, e := range events {
			body := map[string]string{}
			for k, v := range e.Body {
				body[k] = v
			}
			e.Body = body
			out[i] = e
		}
		return out
	}
	cases := map[string]struct {
		events []Event
		head   string
		run    RunEvidence
		code   string
	}{
		"removed":      {events: slices.Delete(clone(), 2, 3), head: head, run: run, code: LedgerSequence},
		"removed last": {events: clone()[:n-1], head: events[n-2].Digest, run: run, code: LedgerShape},
		"reordered":    {events: func() []Event { e := clone(); e[3], e[4] = e[4], e[3]; return e }(), head: head, run: run, code: LedgerSequence},
		"altered body": {events: func() []Event { e := clone(); e[6].Body["outcome"] = "error"; return e }(), head: head, run: run, code: LedgerDigest},
		"altered and re-digested": {events: func() []Event {
			e := clone()
			e[6].Body["outcome"] = "error"
			e[6].Digest = e[6].computeDigest()
			return e
		}(), head: head, run: run, code: LedgerChain},
		"wrong head":        {events: clone(), head: events[0].Digest, run: run, code: LedgerHead},
		"unknown kind":      {events: func() []Event { e := clone(); e[1].Kind = "call_teleported"; return e }(), head: head, run: run, code: LedgerDigest},
		"other plan":        {events: clone(), head: head, run: edited(run, func(r *RunEvidence) { r.PlanSHA256 = "sha256:" + strings.Repeat("0", 64) }), code: LedgerPlan},
		"other run":         {events: clone(), head: head, run: edited(run, func(r *RunEvidence) { r.RunID = "run-2" }), code: LedgerRun},
		"other status":      {events: clone(), head: head, run: edited(run, func(r *RunEvidence) { r.Status = "error" }), code: LedgerStatus},
		"other exit code":   {events: clone(), head: head, run: edited(run, func(r *RunEvidence) { r.ExitCode = 1 }), code: LedgerStatus},
		"other error code":  {events: clone(), head: head, run: edited(run, func(r *RunEvidence) { r.ErrorCode = "timeout" }), code: LedgerStatus},
		"a receipt dropped": {events: clone(), head: head, run: edited(run, func(r *RunEvidence) { r.Receipts = r.Receipts[:1] }), code: LedgerReceipts},
		"a receipt added": {events: clone(), head: head, run: edited(run, func(r *RunEvidence) { r.Receipts = append(slices.Clone(r.Receipts), r.Receipts[0]) }),
			code: LedgerStatus},
		"receipts swapped": {events: clone(), head: head, run: edited(run, func(r *RunEvidence) { r.Receipts = []Receipt{r.Receipts[1], r.Receipts[0]} }),
			code: LedgerReceipts},
		"empty": {head: "", run: run, code: LedgerEmpty},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ps := VerifyRunLedger(tc.events, tc.head, tc.run)
			if !slices.Contains(codesOf(ps), tc.code) {
				t.Fatalf("problems %+v, want %s", ps, tc.code)
			}
		})
	}
}

// edited is a copy of run changed by edit.
func edited(run RunEvidence, edit func(*RunEvidence)) RunEvidence {
	edit(&run)
	return run
}

// TestLedgerBounded: a guest sending frames without end cannot grow the
// ledger past MaxLedgerEvents; the closing events still fit, and run_ended
// binds how many were omitted.
func TestLedgerBounded(t *testing.T) {
	l := NewLedger()
	l.Append(EventRunAdmitted, nil)
	for i := 0; i < MaxLedgerEvents+100; i++ {
		l.Append(EventCallIntent, map[string]string{"frame_sha256": fmt.Sprint(i)})
	}
	if _, ok := l.Append(EventWorkspace, map[string]string{"disposition": "discarded"}); !ok {
		t.Fatal("the workspace event did not fit")
	}
	end, ok := l.Append(EventRunEnded, map[string]string{"status": "ok"})
	// run_admitted and the intents that fit before the closing events.
	omitted := MaxLedgerEvents + 100 - (MaxLedgerEvents - closingEvents - 1)
	if !ok || end.Body["events_omitted"] != fmt.Sprint(omitted) {
		t.Fatalf("run_ended %+v %v", end, ok)
	}
	if _, ok := l.Append(EventCallIntent, nil); ok {
		t.Fatal("an event after run_ended")
	}
	if events := l.Events(); len(events) != MaxLedgerEvents || len(VerifyLedger(events, l.Head())) != 0 {
		t.Fatalf("%d events, problems %+v", len(events), VerifyLedger(events, l.Head()))
	}
}

// TestEventCanonical: the event's hand-written canonical form is exactly
// RFC 8785's (canonjson.Canonical) of {"body","kind","prev","seq"}.
func TestEventCanonical(t *testing.T) {
	for _, e := range []Event{
		{Seq: 1, Kind: EventRunAdmitted, Body: map[string]string{}},
		{Seq: 42, Prev: "sha256:ab", Kind: EventCallRefused, Body: map[string]string{"call_id": "p:program:7", "error_code": "grant_denied"}},
		{Seq: 3, Kind: EventCallAdmitted, Body: map[string]string{"call_id": "q\"uote\\back\nline\x01ctl\u2028é😀</>&", "z": "", "a": "1"}},
		// Not UTF-8 (a body never should be): each bad byte is U+FFFD.
		{Seq: 4, Kind: EventCallRefused, Body: map[string]string{"call_id": "bad\xffbyte\xc3", "\xfe": "x", "run": "\xff\xfe\xc3("}},
	} {
		want, err := canonjson.Canonical(canonjson.MustMarshal(map[string]any{"body": e.Body, "kind": e.Kind, "prev": e.Prev, "seq": e.Seq}))
		if err != nil {
			t.Fatal(err)
		}
		if got := e.appendCanonical(nil); string(got) != string(want) {
			t.Errorf("canonical\n got %s\nwant %s", got, want)
		}
	}
}
