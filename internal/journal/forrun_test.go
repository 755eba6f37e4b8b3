package journal

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/plan"
)

// journaledRun is a Plan with one capability, "act", whose handler counts
// its dispatches, optionally behind an approval.
type journaledRun struct {
	plan       *plan.Plan
	handlers   *broker.Handlers
	dispatched map[string]*atomic.Int32 // by the argument "n"
	onCall     func(n string)
}

func newJournaledRun(t *testing.T, approval bool) *journaledRun {
	t.Helper()
	r, _ := plan.NewRegistry(16)
	id, err := plan.NewHandlerIdentity("builtin", "act", "1", nil)
	if err != nil {
		t.Fatal(err)
	}
	spec := plan.Spec{Name: "act", Version: "1", Effect: plan.EffectWrite, Playback: plan.PlaybackLive, Handler: id,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"string"}},"required":["n"]}`)}
	if approval {
		spec.Approval = &plan.Approval{LeaseSeconds: 60}
	}
	if err := r.Register(spec); err != nil {
		t.Fatal(err)
	}
	g, _ := plan.NewGrant(json.RawMessage(`{}`))
	_ = r.Bind("act", g)
	p, err := r.Seal()
	if err != nil {
		t.Fatal(err)
	}
	jr := &journaledRun{plan: p, handlers: broker.NewHandlers(), dispatched: map[string]*atomic.Int32{}}
	for n := 1; n <= 9; n++ {
		jr.dispatched[strconv.Itoa(n)] = new(atomic.Int32)
	}
	_ = jr.handlers.Add(id, broker.HandlerFunc(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		var a struct{ N string }
		_ = json.Unmarshal(args, &a)
		jr.dispatched[a.N].Add(1)
		if jr.onCall != nil {
			jr.onCall(a.N)
		}
		return json.RawMessage(`{"done":"` + a.N + `"}`), nil
	}))
	return jr
}

func (jr *journaledRun) broker(t *testing.T, j *Journal, key string, approvals *broker.Approvals) *broker.Broker {
	t.Helper()
	b, err := broker.New(broker.Config{Plan: jr.plan, RunID: "run-" + key, Surface: plan.SurfaceDirect, Handlers: jr.handlers,
		Approvals: approvals, Journal: j.ForRun(key)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

type brokerResponse struct {
	Status    string          `json:"status"`
	ErrorCode string          `json:"error_code"`
	Result    json.RawMessage `json:"result"`
}

func call(t *testing.T, b *broker.Broker, n int) brokerResponse {
	t.Helper()
	raw := b.Call(ctx, []byte(`{"call_id":"capability-`+strconv.Itoa(n)+`","capability":"act","arguments":{"n":"`+strconv.Itoa(n)+`"}}`)).AppendJSON(nil)
	var r brokerResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return r
}

// TestBrokerReplaysAfterCrash: an attempt dies while call 3's handler runs
// (its outcome is never recorded). The next attempt of the same run gets
// calls 1 and 2 back from the journal with replayed receipts and nothing
// dispatched, call 3 as ambiguous dispatch_outcome_unknown, never retried,
// and call 4 dispatched as usual: no handler ran twice for one call id.
func TestBrokerReplaysAfterCrash(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir)
	jr := newJournaledRun(t, false)
	if _, err := j.BeginRun(ctx, "k", fp, deadOwner); err != nil {
		t.Fatal(err)
	}
	jr.onCall = func(n string) {
		if n == "3" {
			j.Close() // the supervisor dies while the handler runs
		}
	}
	b := jr.broker(t, j, "k", nil)
	first := []brokerResponse{call(t, b, 1), call(t, b, 2)}
	call(t, b, 3)

	jr.onCall = nil
	j = open(t, dir)
	if _, err := j.BeginRun(ctx, "k", fp, Owner()); err != nil {
		t.Fatal(err)
	}
	b = jr.broker(t, j, "k", nil)
	for i, want := range first {
		got := call(t, b, i+1)
		if got.Status != "ok" || string(got.Result) != string(want.Result) {
			t.Errorf("call %d replayed: %+v, first %+v", i+1, got, want)
		}
	}
	if got := call(t, b, 3); got.Status != broker.StatusAmbiguous || got.ErrorCode != broker.CodeDispatchUnknown {
		t.Errorf("call 3: %+v", got)
	}
	if got := call(t, b, 4); got.Status != "ok" {
		t.Errorf("call 4: %+v", got)
	}
	for n, c := range jr.dispatched {
		if c.Load() > 1 {
			t.Errorf("call %s dispatched %d times", n, c.Load())
		}
	}
	if jr.dispatched["4"].Load() != 1 || jr.dispatched["3"].Load() != 1 {
		t.Errorf("dispatches: 3:%d 4:%d", jr.dispatched["3"].Load(), jr.dispatched["4"].Load())
	}
	rs := b.Receipts()
	if len(rs) != 4 || !rs[0].Replayed || !rs[1].Replayed || rs[2].Replayed || rs[3].Replayed {
		t.Fatalf("receipts: %+v", rs)
	}
	if err := broker.VerifyReceipts(jr.plan.Identity(), "run-k", broker.MarshalReceipts(rs)); err != nil {
		t.Fatalf("replayed receipts do not verify: %v", err)
	}
	for _, c := range []string{"capability-1", "capability-2", "capability-4"} {
		if rec, _ := j.Call(ctx, "k", c); rec.Answer() != Completed {
			t.Errorf("%s: %s", c, rec.Answer())
		}
	}
	if rec, _ := j.Call(ctx, "k", "capability-3"); rec.Answer() != Unknown {
		t.Errorf("capability-3: %s", rec.Answer())
	}
	// Another request under a recorded call id is refused, not dispatched.
	call(t, b, 5)
	if _, err := j.db.Exec(`UPDATE runs SET owner = ?`, deadOwner); err != nil { // attempt 2's process dies
		t.Fatal(err)
	}
	if _, err := j.BeginRun(ctx, "k", fp, Owner()); err != nil {
		t.Fatal(err)
	}
	b = jr.broker(t, j, "k", nil)
	mismatch := b.Call(ctx, []byte(`{"call_id":"capability-5","capability":"act","arguments":{"n":"6"}}`)).AppendJSON(nil)
	if !strings.Contains(string(mismatch), broker.CodeCallIdentityMismatch) || jr.dispatched["6"].Load() != 0 {
		t.Fatalf("another request under capability-5: %s", mismatch)
	}
	if p := j.Verify(ctx); len(p) != 0 {
		t.Fatalf("Verify: %+v", p)
	}
}

// TestBrokerKeepsRecordedDecision: a decision recorded by an earlier
// attempt is not asked again, even with no approver now; an approval
// whose lease ended before the dispatch is expired.
func TestBrokerKeepsRecordedDecision(t *testing.T) {
	j := open(t, t.TempDir())
	jr := newJournaledRun(t, true)
	if _, err := j.BeginRun(ctx, "k", fp, deadOwner); err != nil {
		t.Fatal(err)
	}
	for n, decision := range map[int]string{1: "approved", 2: "rejected", 3: "approved"} {
		notAfter := time.Now().Add(time.Hour)
		if n == 3 {
			notAfter = time.Now().Add(-time.Second)
		}
		req := RequestDigestFor(t, n)
		if _, _, err := j.Intent(ctx, "k", "capability-"+strconv.Itoa(n), req); err != nil {
			t.Fatal(err)
		}
		if err := j.Decide(ctx, "k", "capability-"+strconv.Itoa(n), "apr_"+strconv.Itoa(n), decision, notAfter.UnixMilli()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := j.BeginRun(ctx, "k", fp, Owner()); err != nil {
		t.Fatal(err)
	}
	b := jr.broker(t, j, "k", nil) // no approver: a call asking now would be denied approval_unavailable
	if got := call(t, b, 1); got.Status != "ok" || jr.dispatched["1"].Load() != 1 {
		t.Errorf("recorded approval: %+v", got)
	}
	if got := call(t, b, 2); got.ErrorCode != broker.CodeApprovalRejected || jr.dispatched["2"].Load() != 0 {
		t.Errorf("recorded rejection: %+v", got)
	}
	if got := call(t, b, 3); got.ErrorCode != broker.CodeApprovalExpired || jr.dispatched["3"].Load() != 0 {
		t.Errorf("recorded approval past its lease: %+v", got)
	}
	if rs := b.Receipts(); rs[0].ApprovalRequestID != "apr_1" {
		t.Errorf("the receipt names the recorded approval: %+v", rs[0])
	}
	if p := j.Verify(ctx); len(p) != 0 {
		t.Fatalf("Verify: %+v", p)
	}
}

// TestBrokerLeavesACancelledCallAbsent: an attempt that ends while a call
// waits for its approval (SIGTERM, a server's shutdown: the call's context
// ends) leaves the call absent, as a crash there does, and the next
// attempt asks again. It used to record approval_cancelled as the call's
// completion (and journal_unavailable first, the decision's write failing
// on the ended context), which every later attempt replayed: the run
// could never complete.
func TestBrokerLeavesACancelledCallAbsent(t *testing.T) {
	j := open(t, t.TempDir())
	jr := newJournaledRun(t, true)
	if _, err := j.BeginRun(ctx, "k", fp, deadOwner); err != nil {
		t.Fatal(err)
	}
	approvals := broker.NewApprovals(broker.ApprovalOptions{})
	b := jr.broker(t, j, "k", approvals)
	events, stop := approvals.Subscribe()
	ending, end := context.WithCancel(ctx)
	go func() {
		<-events // waiting
		end()    // the attempt ends
	}()
	raw := b.Call(ending, []byte(`{"call_id":"capability-1","capability":"act","arguments":{"n":"1"}}`)).AppendJSON(nil)
	stop()
	if !strings.Contains(string(raw), broker.CodeApprovalCancelled) || jr.dispatched["1"].Load() != 0 {
		t.Fatalf("the ended attempt's call: %s", raw)
	}
	if rec, _ := j.Call(ctx, "k", "capability-1"); rec.Answer() != Absent {
		t.Fatalf("capability-1 after the attempt: %s, want absent", rec.Answer())
	}
	if _, err := j.BeginRun(ctx, "k", fp, Owner()); err != nil {
		t.Fatal(err)
	}
	approvals = broker.NewApprovals(broker.ApprovalOptions{})
	b = jr.broker(t, j, "k", approvals)
	events, stop = approvals.Subscribe()
	defer stop()
	go func() {
		ev := <-events
		_ = approvals.Approve(ev.Record.ID)
	}()
	if got := call(t, b, 1); got.Status != "ok" || jr.dispatched["1"].Load() != 1 {
		t.Fatalf("the next attempt: %+v, %d dispatches", got, jr.dispatched["1"].Load())
	}
	if p := j.Verify(ctx); len(p) != 0 {
		t.Fatalf("Verify: %+v", p)
	}
}

// RequestDigestFor is the request digest of call n of newJournaledRun.
func RequestDigestFor(t *testing.T, n int) string {
	t.Helper()
	return broker.RequestDigest("capability-"+strconv.Itoa(n), "act", json.RawMessage(`{"n":"`+strconv.Itoa(n)+`"}`))
}
