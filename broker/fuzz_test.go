package broker

import (
	"context"
	"testing"

	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/plan"
)

// FuzzCall drives arbitrary frames through admission and dispatch: the
// Broker never panics, always answers strict JSON, and never dispatches
// more calls than it wrote receipts for.
func FuzzCall(f *testing.F) {
	for _, s := range []string{
		`{"call_id":"capability-1","capability":"echo","arguments":{"x":1}}`,
		`{"call_id":"p:program:1","capability":"echo","arguments":{}}`,
		`{"call_id":"capability-1","capability":"notes.put","arguments":{}}`,
		`{"call_id":"capability-2","capability":"web.get","arguments":{"a":[1,{"b":null}]}}`,
		`{"call_id":"capability-1","call_id":"x"}`, `[]`, ``, "\xff",
	} {
		f.Add([]byte(s))
	}
	fx := newFixture(f, 256)
	f.Fuzz(func(t *testing.T, frame []byte) {
		// No approver: calls that need approval are denied at once, so no
		// input blocks, and the context stays live so that the others
		// reach their handlers.
		b, err := New(Config{Plan: fx.plan, RunID: "run-1", Surface: plan.SurfaceBoth, Parent: "p", Handlers: fx.handlers})
		if err != nil {
			t.Fatal(err)
		}
		before := fx.dispatches()
		out := b.Call(context.Background(), frame)
		var d decoded
		if err := canonjson.DecodeStrict(out, 4<<20, &d); err != nil {
			t.Fatalf("response not strict JSON: %v", err)
		}
		receipts := int64(len(b.Receipts()))
		if fx.dispatches()-before > receipts {
			t.Fatalf("dispatched without a receipt")
		}
		if d.Status == StatusRefused && receipts != 0 {
			t.Fatal("refusal wrote a receipt")
		}
	})
}
