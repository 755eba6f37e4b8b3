package broker

import (
	"context"
	"encoding/json"
	"strings"
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
		`{"call_id":"capability-3","capability":"limited","arguments":{"city":"Rome","tags":["abcd"]}}`,
		`{"call_id":"capability-4","capability":"gated","arguments":{"text":"a long one"}}`,
		`{"call_id":"capability-5","capability":"checked","arguments":{"key":"forbidden"}}`,
	} {
		f.Add([]byte(s))
	}
	fx := newFixture(f, 256)
	declared := map[string]bool{"city": true, "tags": true, "text": true, "key": true}
	f.Fuzz(func(t *testing.T, frame []byte) {
		// No approver: calls that need approval are denied at once, so no
		// input blocks, and the context stays live so that the others
		// reach their handlers.
		b, err := New(Config{Plan: fx.plan, RunID: "run-1", Surface: plan.SurfaceBoth, Parent: "p", Handlers: fx.handlers})
		if err != nil {
			t.Fatal(err)
		}
		before := fx.dispatches()
		out := b.Call(context.Background(), frame).AppendJSON(nil)
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
		// A grant refusal names at most a path of declared names and
		// indices: never a key or value the guest wrote.
		if d.ErrorCode == CodeGrantDenied && d.Message != grantDeniedArguments && d.Message != grantDeniedBudget {
			pointer, ok := strings.CutPrefix(d.Message, grantDeniedArgument)
			for _, seg := range strings.Split(pointer, "/")[1:] {
				if _, index := parseSeq(seg); !ok || !(seg == "0" || index || declared[seg]) {
					t.Fatalf("grant_denied message %q", d.Message)
				}
			}
		}
	})
}

// strictFrame is how admission decoded a frame before canonjson.Fields:
// DecodeStrict into a struct, each member required.
type strictFrame struct {
	CallID     *string         `json:"call_id"`
	Capability *string         `json:"capability"`
	Arguments  json.RawMessage `json:"arguments"`
}

// FuzzFrameFields: admission's frame decoding (canonjson.Fields and
// String) accepts exactly the frames DecodeStrict into a struct accepts,
// and reads the same call id, capability and argument bytes from them.
func FuzzFrameFields(f *testing.F) {
	for _, s := range []string{
		`{"call_id":"capability-1","capability":"echo","arguments":{"x":1}}`,
		` {"arguments" : {"a":[1,{"b":null}]} , "capability":"e\u0063ho","call_id":"p:program:1"} `,
		`{"call_id":null,"capability":"echo","arguments":{}}`, `{"call_id":"c","capability":"e","arguments":null}`,
		`{"call_id":"c","capability":"e"}`, `{"call_id":"c","capability":"e","arguments":{},"x":1}`,
		`{"Call_ID":"c","capability":"e","arguments":{}}`, `{"call_id":1,"capability":"e","arguments":{}}`,
		`null`, `[]`, `"x"`, `{"call_id":"capability-1","call_id":"x"}`, ``, "\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var old strictFrame
		oldErr := canonjson.DecodeStrict(data, MaxFrameBytes, &old)
		oldOK := oldErr == nil && old.CallID != nil && old.Capability != nil && old.Arguments != nil
		parts, err := canonjson.Fields(data, MaxFrameBytes, "call_id", "capability", "arguments")
		var id, capability string
		newOK := err == nil
		if newOK {
			var idOK, capOK bool
			id, idOK = canonjson.String(parts[0])
			capability, capOK = canonjson.String(parts[1])
			newOK = idOK && capOK && parts[2] != nil
		}
		if oldOK != newOK {
			t.Fatalf("%q: DecodeStrict accepts %v (%v), Fields %v (%v)", data, oldOK, oldErr, newOK, err)
		}
		if oldOK && (id != *old.CallID || capability != *old.Capability || string(parts[2]) != string(old.Arguments)) {
			t.Fatalf("%q: read %q %q %s, DecodeStrict %q %q %s", data, id, capability, parts[2], *old.CallID, *old.Capability, old.Arguments)
		}
	})
}
