package broker

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/apysup/apysup/plan"
)

// A grant refusal comes after the input schema and before approval: the
// call is refused receipt-free (it never becomes an operation of the run),
// opens no approval request, dispatches nothing, and its message names the
// argument's path but never the policy or the value.
func TestGrantDeniedBeforeApproval(t *testing.T) {
	tests := []struct {
		capability, args, message string
	}{
		{"limited", `{"city":"Berlin"}`, "the capability's grant does not allow the argument at /city"},
		{"limited", `{"city":"Paris","tags":["ok","long"]}`, "the capability's grant does not allow the argument at /tags/1"},
		{"gated", `{"text":"a long note"}`, "the capability's grant does not allow the argument at /text"},
		{"checked", `{"key":"forbidden"}`, "the capability's grant does not allow the argument at /key"},
	}
	for _, tc := range tests {
		t.Run(tc.capability+" "+tc.args, func(t *testing.T) {
			f := newFixture(t, 8)
			b := f.broker(t, plan.SurfaceDirect, "")
			got := decode(t, b.Call(context.Background(), frameOf("capability-1", tc.capability, tc.args)))
			if got.Status != StatusRefused || got.ErrorCode != CodeGrantDenied || got.Message != tc.message || got.Result != nil || got.ReceiptID != "" {
				t.Fatalf("got %+v", got)
			}
			for _, secret := range []string{"Paris", "Oslo", "Berlin", "maxLength", "long", "enum"} {
				if strings.Contains(got.Message, secret) {
					t.Fatalf("the message shows %q: %s", secret, got.Message)
				}
			}
			if n := f.dispatches(); n != 0 {
				t.Fatalf("%d dispatches", n)
			}
			if recs := f.approvals.Records(); len(recs) != 0 {
				t.Fatalf("a refused call opened approval requests: %+v", recs)
			}
			if rs := b.Receipts(); len(rs) != 0 {
				t.Fatalf("receipts %+v", rs)
			}
		})
	}
}

// A grant that allows the arguments lets the call through to approval and
// dispatch, unchanged.
func TestGrantAllows(t *testing.T) {
	f := newFixture(t, 8)
	b := f.broker(t, plan.SurfaceDirect, "")
	if got := decode(t, b.Call(context.Background(), frameOf("capability-1", "limited", `{"city":"Oslo","tags":["abc"]}`))); got.Status != StatusOK ||
		string(got.Result) != `{"echo":{"city":"Oslo","tags":["abc"]}}` {
		t.Fatalf("%+v", got)
	}
	if got := decode(t, b.Call(context.Background(), frameOf("capability-2", "checked", `{"key":"fine"}`))); got.Status != StatusOK {
		t.Fatalf("%+v", got)
	}
	done := make(chan decoded, 1)
	go func() {
		done <- decode(t, b.Call(context.Background(), frameOf("capability-3", "gated", `{"text":"short"}`)))
	}()
	p := waitPending(t, f.approvals)
	_ = f.approvals.Approve(p.ID)
	if got := <-done; got.Status != StatusOK || f.gated.n.Load() != 1 {
		t.Fatalf("%+v", got)
	}
}

// max_calls counts the calls that reached their handler, whatever the
// handler did; calls refused before it (the grant's arguments, the input
// schema) spend nothing. Past the budget: grant_denied, no dispatch.
func TestGrantMaxCalls(t *testing.T) {
	f := newFixture(t, 16)
	b := f.broker(t, plan.SurfaceDirect, "")
	n := 0
	call := func(args string) decoded {
		n++
		return decode(t, b.Call(context.Background(), frameOf("capability-"+strconv.Itoa(n), "limited", args)))
	}
	steps := []struct {
		args, status, code string
		setup              func()
	}{
		{`{"city":"Berlin"}`, StatusRefused, CodeGrantDenied, nil},                                         // refused by the grant: not counted
		{`{"city":3}`, StatusDenied, CodeInputSchema, nil},                                                 // refused by the schema: not counted
		{`{"city":"Paris"}`, StatusError, CodeHandlerError, func() { f.limited.err = errors.New("down") }}, // reached the handler: 1
		{`{"city":"Oslo"}`, StatusOK, "", func() { f.limited.err = nil }},                                  // 2
		{`{"city":"Paris"}`, StatusRefused, CodeGrantDenied, nil},                                          // budget spent
		{`{"city":"Berlin"}`, StatusRefused, CodeGrantDenied, nil},
	}
	for i, st := range steps {
		if st.setup != nil {
			st.setup()
		}
		got := call(st.args)
		if got.Status != st.status || got.ErrorCode != st.code {
			t.Fatalf("step %d %s: got %+v", i, st.args, got)
		}
	}
	if f.limited.n.Load() != 2 {
		t.Fatalf("%d dispatches, want 2", f.limited.n.Load())
	}
	last := decode(t, b.Call(context.Background(), frameOf("capability-99", "limited", `{"city":"Oslo"}`)))
	// Receipts: the schema refusal and the two calls that reached the handler.
	if last.Message != grantDeniedBudget || len(b.Receipts()) != 3 {
		t.Fatalf("%+v, %d receipts", last, len(b.Receipts()))
	}
	// Another capability is not bound by this grant's budget, and another
	// run starts afresh.
	if got := decode(t, b.Call(context.Background(), frameOf("capability-100", "echo", `{}`))); got.Status != StatusOK {
		t.Fatalf("%+v", got)
	}
	if got := decode(t, f.broker(t, plan.SurfaceDirect, "").Call(context.Background(), frameOf("capability-1", "limited", `{}`))); got.Status != StatusOK {
		t.Fatalf("a new run: %+v", got)
	}
}

// A call holds its place in the budget while it waits for approval (a
// concurrent call is refused), gives it back when it is refused, and
// spends it when it is dispatched.
func TestGrantBudgetAcrossApproval(t *testing.T) {
	f := newFixture(t, 16)
	b := f.broker(t, plan.SurfaceDirect, "")
	wait := func(id string) (chan decoded, PendingRequest) {
		done := make(chan decoded, 1)
		go func() { done <- decode(t, b.Call(context.Background(), frameOf(id, "gated", `{"text":"note"}`))) }()
		return done, waitPending(t, f.approvals)
	}
	done, p := wait("capability-1")
	if got := decode(t, b.Call(context.Background(), frameOf("capability-2", "gated", `{"text":"other"}`))); got.ErrorCode != CodeGrantDenied || got.Message != grantDeniedBudget {
		t.Fatalf("the held budget admitted a second call: %+v", got)
	}
	_ = f.approvals.Reject(p.ID)
	if got := <-done; got.ErrorCode != CodeApprovalRejected {
		t.Fatalf("%+v", got)
	}
	done, p = wait("capability-3") // the rejected call gave its place back
	_ = f.approvals.Approve(p.ID)
	if got := <-done; got.Status != StatusOK {
		t.Fatalf("%+v", got)
	}
	got := decode(t, b.Call(context.Background(), frameOf("capability-4", "gated", `{"text":"again"}`)))
	if got.ErrorCode != CodeGrantDenied || f.gated.n.Load() != 1 || len(f.approvals.Records()) != 2 {
		t.Fatalf("%+v, %d dispatches, %d approval records", got, f.gated.n.Load(), len(f.approvals.Records()))
	}
}

// The Plan's max_calls still counts every admitted call, grant refusals
// included: the call id was spent and a receipt written.
func TestGrantDeniedCountsAgainstThePlan(t *testing.T) {
	f := newFixture(t, 2)
	b := f.broker(t, plan.SurfaceDirect, "")
	for i := 1; i <= 2; i++ {
		if got := decode(t, b.Call(context.Background(), frameOf("capability-"+strconv.Itoa(i), "limited", `{"city":"Rome"}`))); got.ErrorCode != CodeGrantDenied {
			t.Fatalf("%+v", got)
		}
	}
	if got := decode(t, b.Call(context.Background(), frameOf("capability-3", "limited", `{"city":"Paris"}`))); got.ErrorCode != CodeMaxCallsExhausted {
		t.Fatalf("%+v", got)
	}
}
