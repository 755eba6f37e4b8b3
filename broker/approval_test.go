package broker

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apysup/apysup/plan"
)

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
			if (tc.n == 1) != (rec.Dispatched && rec.Completed && rec.Outcome == StatusOK) {
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
	rec, err := a.Request(ApprovalRequest{CallID: "c", Capability: "x", Lease: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	state, err := a.Wait(context.Background(), rec.ID)
	if err != nil || state != ApprovalExpired {
		t.Fatalf("%s %v", state, err)
	}
	if err := a.BeginDispatch(rec.ID); !errors.Is(err, ErrNotApproved) {
		t.Fatal(err)
	}
}

func TestApprovalControllerRules(t *testing.T) {
	a := NewApprovals(ApprovalOptions{MaxRecords: 2})
	for _, lease := range []time.Duration{0, 999 * time.Millisecond, 24*time.Hour + time.Second} {
		if _, err := a.Request(ApprovalRequest{Lease: lease}); !errors.Is(err, ErrApprovalBadLease) {
			t.Fatalf("lease %v: %v", lease, err)
		}
	}
	r1, _ := a.Request(ApprovalRequest{CallID: "1", Lease: time.Hour, Preview: strings.Repeat("é", MaxPreviewBytes)})
	r2, _ := a.Request(ApprovalRequest{CallID: "2", Lease: time.Hour})
	if _, err := a.Request(ApprovalRequest{CallID: "3", Lease: time.Hour}); !errors.Is(err, ErrApprovalAuditFull) {
		t.Fatalf("full audit: %v", err)
	}
	if p := a.Pending(); len(p) != 2 || len(p[0].Preview) > MaxPreviewBytes+len("…") {
		t.Fatalf("pending %d, preview %d bytes", len(p), len(p[0].Preview))
	}
	if err := a.Complete(r1.ID, "ok"); !errors.Is(err, ErrNotDispatched) {
		t.Fatalf("complete before dispatch: %v", err)
	}
	if err := a.BeginDispatch(r1.ID); !errors.Is(err, ErrNotApproved) {
		t.Fatalf("dispatch while waiting: %v", err)
	}
	if err := a.Approve(r1.ID); err != nil {
		t.Fatal(err)
	}
	if err := a.Reject(r1.ID); !errors.Is(err, ErrApprovalDecided) {
		t.Fatalf("decided twice: %v", err)
	}
	if err := a.BeginDispatch(r1.ID); err != nil {
		t.Fatal(err)
	}
	if err := a.BeginDispatch(r1.ID); !errors.Is(err, ErrAlreadyDispatched) {
		t.Fatalf("second dispatch: %v", err)
	}
	if err := a.Cancel(r1.ID); !errors.Is(err, ErrAlreadyDispatched) {
		t.Fatalf("cancel after dispatch: %v", err)
	}
	if err := a.AbortApproved(r1.ID); !errors.Is(err, ErrAlreadyDispatched) {
		t.Fatalf("abort after dispatch: %v", err)
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
	if err := a.AbortApproved(r2.ID); err != nil {
		t.Fatal(err)
	}
	if err := a.BeginDispatch(r2.ID); !errors.Is(err, ErrNotApproved) {
		t.Fatalf("dispatch after abort: %v", err)
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

// A cancel racing BeginDispatch never ends both cancelled and dispatched.
func TestCancelRacingBeginDispatch(t *testing.T) {
	a := NewApprovals(ApprovalOptions{MaxRecords: 20000})
	var dispatched, cancelled atomic.Int64
	for i := range 10000 {
		rec, err := a.Request(ApprovalRequest{CallID: "c", Capability: "x", Lease: time.Hour})
		if err != nil {
			t.Fatal(i, err)
		}
		if err := a.Approve(rec.ID); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var began, cancelOK bool
		wg.Add(2)
		go func() { defer wg.Done(); began = a.BeginDispatch(rec.ID) == nil }()
		go func() { defer wg.Done(); cancelOK = a.Cancel(rec.ID) == nil }()
		wg.Wait()
		final, _ := a.Get(rec.ID)
		if began == cancelOK || final.Dispatched != began || (final.State == ApprovalCancelled) != cancelOK {
			t.Fatalf("iteration %d: began=%v cancelled=%v record=%+v", i, began, cancelOK, final)
		}
		if began {
			dispatched.Add(1)
		} else {
			cancelled.Add(1)
		}
	}
	t.Logf("dispatched %d, cancelled %d", dispatched.Load(), cancelled.Load())
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
	if _, err := f.approvals.Request(ApprovalRequest{Lease: time.Hour}); err != nil {
		t.Fatal(err)
	}
	b := f.broker(t, plan.SurfaceDirect, "")
	got := decode(t, b.Call(context.Background(), frameOf("capability-1", "notes.put", `{}`)))
	if got.Status != StatusDenied || got.ErrorCode != CodeApprovalAuditFull || f.approved.n.Load() != 0 {
		t.Fatalf("%+v", got)
	}
}
