package broker

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/plan"
)

// testBinding is a well-formed binding of the direct call capability-<n>.
func testBinding(n int) ApprovalBinding {
	return ApprovalBinding{RunID: "run-1", PlanSHA256: canonjson.PlainDigest([]byte("plan")), CallID: "capability-" + strconv.Itoa(n),
		Capability: "notes.put", ArgumentsSHA256: canonjson.PlainDigest([]byte("{}"))}
}

// waitPending waits until the controller has a pending request.
func waitPending(t *testing.T, a *Approvals) PendingRequest {
	t.Helper()
	for range 2000 {
		if p := a.Pending(); len(p) > 0 {
			return p[0]
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("no pending approval request")
	return PendingRequest{}
}

func TestApprovalInsideTheSameCall(t *testing.T) {
	cases := []struct {
		name   string
		decide func(a *Approvals, id string, cancel context.CancelFunc)
		status string
		code   string
		n      int64
	}{
		{"approve", func(a *Approvals, id string, _ context.CancelFunc) { _ = a.Approve(id) }, StatusOK, "", 1},
		{"reject", func(a *Approvals, id string, _ context.CancelFunc) { _ = a.Reject(id) }, StatusDenied, CodeApprovalRejected, 0},
		{"cancel", func(a *Approvals, id string, _ context.CancelFunc) { _ = a.Cancel(id) }, StatusDenied, CodeApprovalCancelled, 0},
		{"caller goes away", func(_ *Approvals, _ string, cancel context.CancelFunc) { cancel() }, StatusDenied, CodeApprovalCancelled, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 4)
			b := f.broker(t, plan.SurfaceDirect, "")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			events, stop := f.approvals.Subscribe()
			defer stop()
			done := make(chan decoded, 1)
			go func() { done <- decode(t, b.Call(ctx, frameOf("capability-1", "notes.put", `{"text":"buy milk"}`))) }()
			p := waitPending(t, f.approvals)
			if p.Capability != "notes.put" || p.CallID != "capability-1" || !strings.Contains(p.Preview, "buy milk") || p.Lease != time.Minute {
				t.Fatalf("pending %+v", p)
			}
			select {
			case <-done:
				t.Fatal("call returned before a decision")
			default:
			}
			if f.approved.n.Load() != 0 {
				t.Fatal("dispatched before approval")
			}
			tc.decide(f.approvals, p.ID, cancel)
			got := <-done
			if got.Status != tc.status || got.ErrorCode != tc.code || f.approved.n.Load() != tc.n {
				t.Fatalf("%+v, %d dispatches", got, f.approved.n.Load())
			}
			rec, _ := f.approvals.Get(p.ID)
			if rec.ArgumentsSHA256 == "" || rec.State == ApprovalWaiting {
				t.Fatalf("record %+v", rec)
			}
			if rs := b.Receipts(); len(rs) != 1 || rs[0].ApprovalRequestID != p.ID {
				t.Fatalf("receipt not bound to approval: %+v", rs)
			}
			if (tc.n == 1) != (rec.Dispatch == DispatchCompleted && rec.Outcome == StatusOK) {
				t.Fatalf("record %+v", rec)
			}
			select {
			case ev := <-events:
				if ev.Record.ID != p.ID {
					t.Fatalf("event %+v", ev)
				}
			default:
				t.Fatal("no event for subscribers")
			}
		})
	}
}

// TestApprovalRacingCancellation races an approval against the end of the
// call's context, through the Broker with an in-memory handler: either the
// call is dispatched (receipt ok, the record completed) or it is cancelled
// (receipt denied approval_cancelled, nothing ran), and a cancellation that
// happened before the dispatch commit point never lets the handler run.
func TestApprovalRacingCancellation(t *testing.T) {
	const iterations = 10000
	f := newFixture(t, 4)
	var dispatched, cancelledWaiting, cancelledApproved, lateCancels int
	for i := range iterations {
		a := NewApprovals(ApprovalOptions{})
		events, stop := a.Subscribe()
		b, err := New(Config{Plan: f.plan, RunID: "run-1", Surface: plan.SurfaceDirect, Handlers: f.handlers, Approvals: a})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		out := make(chan *Response, 1)
		go func() { out <- b.Call(ctx, frameOf("capability-1", "notes.put", `{}`)) }()
		id := (<-events).Record.ID // the request, waiting
		ran := f.approved.n.Load()
		var early bool // the cancellation happened before any dispatch commit
		var wg sync.WaitGroup
		wg.Go(func() { _ = a.Approve(id) })
		wg.Go(func() {
			cancel()
			rec, _ := a.Get(id)
			early = rec.Dispatch == DispatchNone || rec.Dispatch == DispatchCancelled
		})
		wg.Wait()
		got := decode(t, <-out)
		stop()
		ran = f.approved.n.Load() - ran
		rec, _ := a.Get(id)
		rs := b.Receipts()
		if len(rs) != 1 || rs[0].ApprovalRequestID != id || rs[0].Outcome != got.Status || rs[0].ErrorCode != got.ErrorCode {
			t.Fatalf("iteration %d: response %+v, receipts %+v", i, got, rs)
		}
		switch {
		case got.Status == StatusOK && ran == 1 && !early && rec.State == ApprovalApproved && rec.Dispatch == DispatchCompleted:
			dispatched++
		case got.Status == StatusDenied && got.ErrorCode == CodeApprovalCancelled && ran == 0 && rec.Dispatch == DispatchCancelled:
			cancelledApproved++ // both were ready: the commit point saw the context end
		case got.Status == StatusDenied && got.ErrorCode == CodeApprovalCancelled && ran == 0 && rec.State == ApprovalCancelled:
			cancelledWaiting++
		default:
			t.Fatalf("iteration %d: early cancel %v, %d dispatches, response %+v, record %+v", i, early, ran, got, rec)
		}
	}
	lateCancels = int(f.approved.lateCtx.Load())
	t.Logf("%d iterations: dispatched %d (of which %d saw the context end after the commit), cancelled while waiting %d, cancelled after approval at the commit point %d",
		iterations, dispatched, lateCancels, cancelledWaiting, cancelledApproved)
}

func TestApprovalExpiry(t *testing.T) {
	f := newFixture(t, 4)
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	f.approvals = NewApprovals(ApprovalOptions{Now: clock})
	b := f.broker(t, plan.SurfaceDirect, "")
	done := make(chan decoded, 1)
	go func() { done <- decode(t, b.Call(context.Background(), frameOf("capability-1", "notes.put", `{}`))) }()
	p := waitPending(t, f.approvals)
	mu.Lock()
	now = now.Add(2 * time.Minute) // the lease is 60 s
	mu.Unlock()
	if err := f.approvals.Approve(p.ID); err == nil {
		t.Fatal("approved an expired request")
	}
	got := <-done
	if got.Status != StatusDenied || got.ErrorCode != CodeApprovalExpired || f.approved.n.Load() != 0 {
		t.Fatalf("%+v", got)
	}
}

func TestApprovalLeaseRunsOutWhileWaiting(t *testing.T) {
	a := NewApprovals(ApprovalOptions{})
	rec, err := a.Request(ApprovalRequest{ApprovalBinding: testBinding(1), Lease: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	state, err := a.Wait(context.Background(), rec.ID)
	if err != nil || state != ApprovalExpired {
		t.Fatalf("%s %v", state, err)
	}
	if err := a.BeginDispatch(context.Background(), rec.ID, rec.ApprovalBinding); !errors.Is(err, ErrNotApproved) {
		t.Fatal(err)
	}
}

func TestApprovalControllerRules(t *testing.T) {
	ctx := context.Background()
	a := NewApprovals(ApprovalOptions{MaxRecords: 2})
	for _, lease := range []time.Duration{0, 999 * time.Millisecond, 24*time.Hour + time.Second} {
		if _, err := a.Request(ApprovalRequest{ApprovalBinding: testBinding(1), Lease: lease}); !errors.Is(err, ErrApprovalBadLease) {
			t.Fatalf("lease %v: %v", lease, err)
		}
	}
	r1, _ := a.Request(ApprovalRequest{ApprovalBinding: testBinding(1), Lease: time.Hour, Preview: strings.Repeat("é", MaxPreviewBytes)})
	r2, _ := a.Request(ApprovalRequest{ApprovalBinding: testBinding(2), Lease: time.Hour})
	if _, err := a.Request(ApprovalRequest{ApprovalBinding: testBinding(3), Lease: time.Hour}); !errors.Is(err, ErrApprovalAuditFull) {
		t.Fatalf("full audit: %v", err)
	}
	if p := a.Pending(); len(p) != 2 || len(p[0].Preview) > MaxPreviewBytes+len("…") {
		t.Fatalf("pending %d, preview %d bytes", len(p), len(p[0].Preview))
	}
	if err := a.Complete(r1.ID, "ok"); !errors.Is(err, ErrNotDispatched) {
		t.Fatalf("complete before dispatch: %v", err)
	}
	if err := a.BeginDispatch(ctx, r1.ID, r1.ApprovalBinding); !errors.Is(err, ErrNotApproved) {
		t.Fatalf("dispatch while waiting: %v", err)
	}
	if err := a.Approve(r1.ID); err != nil {
		t.Fatal(err)
	}
	if err := a.Reject(r1.ID); !errors.Is(err, ErrApprovalDecided) {
		t.Fatalf("decided twice: %v", err)
	}
	if err := a.BeginDispatch(ctx, r1.ID, r1.ApprovalBinding); err != nil {
		t.Fatal(err)
	}
	if err := a.BeginDispatch(ctx, r1.ID, r1.ApprovalBinding); !errors.Is(err, ErrAlreadyDispatched) {
		t.Fatalf("second dispatch: %v", err)
	}
	for _, decide := range []func(string) error{a.Approve, a.Reject, a.Cancel} {
		if err := decide(r1.ID); !errors.Is(err, ErrApprovalDecided) {
			t.Fatalf("decided after dispatch: %v", err)
		}
	}
	if err := a.Complete(r1.ID, "ok"); err != nil {
		t.Fatal(err)
	}
	if err := a.Complete(r1.ID, "ok"); !errors.Is(err, ErrAlreadyCompleted) {
		t.Fatalf("second complete: %v", err)
	}
	if err := a.Approve(r2.ID); err != nil {
		t.Fatal(err)
	}
	if err := a.Cancel(r2.ID); !errors.Is(err, ErrApprovalDecided) {
		t.Fatalf("an approval was withdrawn: %v", err)
	}
	if rec, _ := a.Get(r2.ID); rec.State != ApprovalApproved || rec.Dispatch != DispatchNone {
		t.Fatalf("record %+v", rec)
	}
	// The call's context ended after the approval: the commit point
	// refuses it, for good, and the decision stays approved.
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if err := a.BeginDispatch(gone, r2.ID, r2.ApprovalBinding); !errors.Is(err, ErrDispatchCancelled) {
		t.Fatalf("dispatch with an ended context: %v", err)
	}
	if err := a.BeginDispatch(ctx, r2.ID, r2.ApprovalBinding); !errors.Is(err, ErrDispatchCancelled) {
		t.Fatalf("dispatch after a cancelled dispatch: %v", err)
	}
	if err := a.Complete(r2.ID, "ok"); !errors.Is(err, ErrNotDispatched) {
		t.Fatalf("complete after a cancelled dispatch: %v", err)
	}
	if rec, _ := a.Get(r2.ID); rec.State != ApprovalApproved || rec.Dispatch != DispatchCancelled || rec.Outcome != "" {
		t.Fatalf("record %+v", rec)
	}
	for _, r := range a.Records() {
		if r.State == ApprovalWaiting {
			t.Fatalf("record left waiting: %+v", r)
		}
	}
	if p := a.Pending(); len(p) != 0 {
		t.Fatalf("pending %+v", p)
	}
}

// A cancellation racing an approval: exactly one decides, and the loser
// changes nothing.
func TestCancelRacingApprove(t *testing.T) {
	a := NewApprovals(ApprovalOptions{MaxRecords: 20000})
	var approved, cancelled int
	for i := range 10000 {
		rec, err := a.Request(ApprovalRequest{ApprovalBinding: testBinding(1), Lease: time.Hour})
		if err != nil {
			t.Fatal(i, err)
		}
		var wg sync.WaitGroup
		var approveErr, cancelErr error
		wg.Add(2)
		go func() { defer wg.Done(); approveErr = a.Approve(rec.ID) }()
		go func() { defer wg.Done(); cancelErr = a.Cancel(rec.ID) }()
		wg.Wait()
		final, _ := a.Get(rec.ID)
		switch {
		case approveErr == nil && errors.Is(cancelErr, ErrApprovalDecided) && final.State == ApprovalApproved:
			approved++
		case cancelErr == nil && errors.Is(approveErr, ErrApprovalDecided) && final.State == ApprovalCancelled:
			cancelled++
		default:
			t.Fatalf("iteration %d: approve %v, cancel %v, record %+v", i, approveErr, cancelErr, final)
		}
	}
	t.Logf("approved %d, cancelled %d", approved, cancelled)
}

func TestAuditFailureIsAmbiguous(t *testing.T) {
	f := newFixture(t, 4)
	f.approvals = NewApprovals(ApprovalOptions{Audit: func(ApprovalRecord) error { return errors.New("disk full") }})
	b := f.broker(t, plan.SurfaceDirect, "")
	done := make(chan decoded, 1)
	go func() { done <- decode(t, b.Call(context.Background(), frameOf("capability-1", "notes.put", `{}`))) }()
	p := waitPending(t, f.approvals)
	if err := f.approvals.Approve(p.ID); err != nil {
		t.Fatal(err)
	}
	got := <-done
	if got.Status != StatusAmbiguous || got.ErrorCode != CodeApprovalAuditFailed || got.Result != nil {
		t.Fatalf("%+v", got)
	}
	if f.approved.n.Load() != 1 {
		t.Fatalf("%d dispatches", f.approved.n.Load())
	}
	if rs := b.Receipts(); len(rs) != 1 || rs[0].Outcome != StatusAmbiguous || rs[0].ErrorCode != CodeApprovalAuditFailed {
		t.Fatalf("%+v", rs)
	}
	// The same call id never dispatches again.
	if again := decode(t, b.Call(context.Background(), frameOf("capability-1", "notes.put", `{}`))); again.ErrorCode != CodeCallIDReused || f.approved.n.Load() != 1 {
		t.Fatalf("%+v", again)
	}
}

func TestNoApproverDenies(t *testing.T) {
	f := newFixture(t, 4)
	b, err := New(Config{Plan: f.plan, RunID: "run-1", Surface: plan.SurfaceDirect, Handlers: f.handlers})
	if err != nil {
		t.Fatal(err)
	}
	got := decode(t, b.Call(context.Background(), frameOf("capability-1", "notes.put", `{}`)))
	if got.Status != StatusDenied || got.ErrorCode != CodeApprovalUnavailable || f.approved.n.Load() != 0 {
		t.Fatalf("%+v", got)
	}
}

func TestAuditFullDenies(t *testing.T) {
	f := newFixture(t, 4)
	f.approvals = NewApprovals(ApprovalOptions{MaxRecords: 1})
	if _, err := f.approvals.Request(ApprovalRequest{ApprovalBinding: testBinding(1), Lease: time.Hour}); err != nil {
		t.Fatal(err)
	}
	b := f.broker(t, plan.SurfaceDirect, "")
	got := decode(t, b.Call(context.Background(), frameOf("capability-1", "notes.put", `{}`)))
	if got.Status != StatusDenied || got.ErrorCode != CodeApprovalAuditFull || f.approved.n.Load() != 0 {
		t.Fatalf("%+v", got)
	}
}

// dispatchMoves are the moves of a record's Dispatch (ApprovalRecord).
var dispatchMoves = map[[2]DispatchState]bool{
	{DispatchNone, DispatchStarted}:      true,
	{DispatchNone, DispatchCancelled}:    true,
	{DispatchNone, DispatchExpired}:      true,
	{DispatchStarted, DispatchCompleted}: true,
	{DispatchStarted, DispatchAmbiguous}: true,
}

// TestApprovalStateMachine drives one record through every sequence of
// four operations and checks each step against the state machine of
// ApprovalRecord: a decision never changes once made, and Dispatch moves
// only along its edges and only for an approved record.
func TestApprovalStateMachine(t *testing.T) {
	type world struct {
		a         *Approvals
		id        string
		now       time.Time
		failAudit bool
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	ops := []struct {
		name string
		do   func(w *world)
	}{
		{"approve", func(w *world) { _ = w.a.Approve(w.id) }},
		{"reject", func(w *world) { _ = w.a.Reject(w.id) }},
		{"cancel", func(w *world) { _ = w.a.Cancel(w.id) }},
		{"caller gone", func(w *world) { _, _ = w.a.Wait(gone, w.id) }},
		{"lease runs out", func(w *world) { w.now = w.now.Add(time.Hour); _, _ = w.a.Wait(context.Background(), w.id) }},
		{"begin dispatch", func(w *world) { _ = w.a.BeginDispatch(context.Background(), w.id, testBinding(1)) }},
		{"begin dispatch, caller gone", func(w *world) { _ = w.a.BeginDispatch(gone, w.id, testBinding(1)) }},
		{"complete", func(w *world) { _ = w.a.Complete(w.id, StatusOK) }},
		{"complete, audit fails", func(w *world) { w.failAudit = true; _ = w.a.Complete(w.id, StatusOK); w.failAudit = false }},
	}
	reached := map[[2]string]bool{}
	const depth = 4
	seq := make([]int, depth)
	for n := 0; ; n++ {
		w := &world{now: time.Unix(1e9, 0)}
		w.a = NewApprovals(ApprovalOptions{
			Now: func() time.Time { return w.now },
			Audit: func(ApprovalRecord) error {
				if w.failAudit {
					return errors.New("disk full")
				}
				return nil
			},
		})
		rec, err := w.a.Request(ApprovalRequest{ApprovalBinding: testBinding(1), Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		w.id = rec.ID
		var steps []string
		for _, op := range seq {
			before, _ := w.a.Get(w.id)
			ops[op].do(w)
			after, _ := w.a.Get(w.id)
			steps = append(steps, ops[op].name)
			reached[[2]string{string(after.State), string(after.Dispatch)}] = true
			switch {
			case before.State != ApprovalWaiting && (after.State != before.State || !after.DecidedAt.Equal(before.DecidedAt)):
				t.Fatalf("%v: the decision changed: %+v -> %+v", steps, before, after)
			case after.Dispatch != DispatchNone && after.State != ApprovalApproved:
				t.Fatalf("%v: a %s record has dispatch %s", steps, after.State, after.Dispatch)
			case after.Dispatch != before.Dispatch && !dispatchMoves[[2]DispatchState{before.Dispatch, after.Dispatch}]:
				t.Fatalf("%v: dispatch moved %s -> %s", steps, before.Dispatch, after.Dispatch)
			case before.Outcome != "" && after.Outcome != before.Outcome:
				t.Fatalf("%v: the outcome changed: %+v -> %+v", steps, before, after)
			}
		}
		// The next sequence, in odometer order.
		i := 0
		for ; i < depth; i++ {
			if seq[i]++; seq[i] < len(ops) {
				break
			}
			seq[i] = 0
		}
		if i == depth {
			break
		}
	}
	for _, want := range [][2]string{
		{"waiting", "none"}, {"approved", "none"}, {"rejected", "none"}, {"expired", "none"}, {"cancelled", "none"},
		{"approved", "dispatched"}, {"approved", "completed"}, {"approved", "ambiguous"}, {"approved", "cancelled"},
		{"approved", "expired"},
	} {
		if !reached[want] {
			t.Errorf("state %s/%s never reached", want[0], want[1])
		}
	}
}

func TestApprovalRequestValidation(t *testing.T) {
	long := strings.Repeat("a", 300)
	for _, tc := range []struct {
		name  string
		edit  func(b *ApprovalBinding)
		field string
		err   error
	}{
		{"no run", func(b *ApprovalBinding) { b.RunID = "" }, "run_id", ErrApprovalFieldMissing},
		{"long run", func(b *ApprovalBinding) { b.RunID = long }, "run_id", ErrApprovalFieldTooLong},
		{"run with a space", func(b *ApprovalBinding) { b.RunID = "run 1" }, "run_id", ErrApprovalFieldMalformed},
		{"no plan", func(b *ApprovalBinding) { b.PlanSHA256 = "" }, "plan_sha256", ErrApprovalFieldMissing},
		{"long plan", func(b *ApprovalBinding) { b.PlanSHA256 += "0" }, "plan_sha256", ErrApprovalFieldTooLong},
		{"plan not a digest", func(b *ApprovalBinding) { b.PlanSHA256 = "sha256:00" }, "plan_sha256", ErrApprovalFieldMalformed},
		{"plan in capitals", func(b *ApprovalBinding) { b.PlanSHA256 = strings.ToUpper(b.PlanSHA256) }, "plan_sha256", ErrApprovalFieldMalformed},
		{"long parent", func(b *ApprovalBinding) { b.ParentCallID = long }, "parent_call_id", ErrApprovalFieldTooLong},
		{"parent with a colon", func(b *ApprovalBinding) { b.ParentCallID, b.CallID = "a:b", "a:b:program:1" }, "parent_call_id", ErrApprovalFieldMalformed},
		{"no call", func(b *ApprovalBinding) { b.CallID = "" }, "call_id", ErrApprovalFieldMissing},
		{"long call", func(b *ApprovalBinding) { b.CallID = "capability-" + long }, "call_id", ErrApprovalFieldTooLong},
		{"call not numbered", func(b *ApprovalBinding) { b.CallID = "capability-01" }, "call_id", ErrApprovalFieldMalformed},
		{"programmatic call, no parent", func(b *ApprovalBinding) { b.CallID = "main:program:1" }, "call_id", ErrApprovalFieldMalformed},
		{"direct call with a parent", func(b *ApprovalBinding) { b.ParentCallID = "main" }, "call_id", ErrApprovalFieldMalformed},
		{"another parent's call", func(b *ApprovalBinding) { b.ParentCallID, b.CallID = "main", "other:program:1" }, "call_id", ErrApprovalFieldMalformed},
		{"no capability", func(b *ApprovalBinding) { b.Capability = "" }, "capability", ErrApprovalFieldMissing},
		{"long capability", func(b *ApprovalBinding) { b.Capability = long }, "capability", ErrApprovalFieldTooLong},
		{"capability not a name", func(b *ApprovalBinding) { b.Capability = "Notes.Put" }, "capability", ErrApprovalFieldMalformed},
		{"no arguments digest", func(b *ApprovalBinding) { b.ArgumentsSHA256 = "" }, "arguments_sha256", ErrApprovalFieldMissing},
		{"arguments digest malformed", func(b *ApprovalBinding) { b.ArgumentsSHA256 = "md5:" + strings.Repeat("0", 67) }, "arguments_sha256", ErrApprovalFieldMalformed},
		{"programmatic call", func(b *ApprovalBinding) { b.ParentCallID, b.CallID = "main", "main:program:7" }, "", nil},
	} {
		a := NewApprovals(ApprovalOptions{})
		b := testBinding(1)
		tc.edit(&b)
		_, err := a.Request(ApprovalRequest{ApprovalBinding: b, Lease: time.Minute})
		var fe *ApprovalFieldError
		switch {
		case tc.err == nil && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != nil && (!errors.As(err, &fe) || fe.Field != tc.field || !errors.Is(err, tc.err)):
			t.Errorf("%s: got %v, want %s: %v", tc.name, err, tc.field, tc.err)
		case tc.err != nil && len(a.Records()) != 0:
			t.Errorf("%s: a refused request left a record", tc.name)
		}
	}
	_, err := NewApprovals(ApprovalOptions{}).Request(ApprovalRequest{ApprovalBinding: testBinding(1)})
	var fe *ApprovalFieldError
	if !errors.As(err, &fe) || fe.Field != "lease" || !errors.Is(err, ErrApprovalBadLease) || err.Error() != "approval: lease: lease must be 1s..24h" {
		t.Fatalf("no lease: %v", err)
	}
}

// A record approves its binding only: BeginDispatch with any other leaves
// it as it was, for the call it does approve.
func TestBeginDispatchChecksTheBinding(t *testing.T) {
	ctx := context.Background()
	a := NewApprovals(ApprovalOptions{})
	rec, err := a.Request(ApprovalRequest{ApprovalBinding: testBinding(1), Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Approve(rec.ID); err != nil {
		t.Fatal(err)
	}
	for _, edit := range []func(b *ApprovalBinding){
		func(b *ApprovalBinding) { b.RunID = "run-2" },
		func(b *ApprovalBinding) { b.PlanSHA256 = canonjson.PlainDigest([]byte("another plan")) },
		func(b *ApprovalBinding) { b.ParentCallID, b.CallID = "main", "main:program:1" },
		func(b *ApprovalBinding) { b.CallID = "capability-2" },
		func(b *ApprovalBinding) { b.Capability = "notes.delete" },
		func(b *ApprovalBinding) { b.ArgumentsSHA256 = canonjson.PlainDigest([]byte(`{"text":"other"}`)) },
	} {
		other := rec.ApprovalBinding
		edit(&other)
		if err := a.BeginDispatch(ctx, rec.ID, other); !errors.Is(err, ErrApprovalMismatch) {
			t.Fatalf("%+v: %v", other, err)
		}
	}
	if got, _ := a.Get(rec.ID); got.Dispatch != DispatchNone {
		t.Fatalf("a mismatch changed the record: %+v", got)
	}
	if err := a.BeginDispatch(ctx, rec.ID, rec.ApprovalBinding); err != nil {
		t.Fatal(err)
	}
	if err := a.Complete(rec.ID, "done"); !errors.Is(err, ErrApprovalFieldMalformed) {
		t.Fatalf("outcome done: %v", err)
	}
	if got, _ := a.Get(rec.ID); got.Dispatch != DispatchStarted || got.Outcome != "" {
		t.Fatalf("a malformed outcome changed the record: %+v", got)
	}
}

// The Broker's record binds the run, the Plan, the parent, the call, the
// capability and the arguments digest of the call it waits in.
func TestApprovalRecordBindsTheCall(t *testing.T) {
	f := newFixture(t, 4)
	b := f.broker(t, plan.SurfaceProgrammatic, "main")
	done := make(chan *Response, 1)
	go func() {
		done <- b.Call(context.Background(), frameOf("main:program:1", "notes.put", `{"text": "buy milk", "a": 1}`))
	}()
	p := waitPending(t, f.approvals)
	want := ApprovalBinding{RunID: "run-1", PlanSHA256: f.plan.Identity(), ParentCallID: "main", CallID: "main:program:1",
		Capability: "notes.put", ArgumentsSHA256: canonjson.Digest(canonjson.DomainArguments, []byte(`{"a":1,"text":"buy milk"}`))}
	if p.ApprovalBinding != want {
		t.Fatalf("record binds %+v, want %+v", p.ApprovalBinding, want)
	}
	if err := f.approvals.Approve(p.ID); err != nil {
		t.Fatal(err)
	}
	if got := decode(t, <-done); got.Status != StatusOK {
		t.Fatalf("%+v", got)
	}
	if rs := b.Receipts(); rs[0].PlanSHA256 != want.PlanSHA256 || rs[0].ParentCallID != want.ParentCallID || rs[0].ApprovalRequestID != p.ID {
		t.Fatalf("%+v", rs[0])
	}
}
