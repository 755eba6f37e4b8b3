package broker

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/apysup/apysup/plan"
)

func runWithReceipts(t *testing.T) (*fixture, []json.RawMessage) {
	f := newFixture(t, 8)
	b := f.broker(t, plan.SurfaceBoth, "toolu_9")
	for _, fr := range [][]byte{
		frameOf("toolu_9:program:1", "echo", `{"x":1}`),
		frameOf("capability-3", "nope", `{}`),
		frameOf("toolu_9:program:2", "typed", `{}`),
		frameOf("toolu_9:program:3", "web.get", `{}`),
	} {
		b.Call(context.Background(), fr)
	}
	rs := MarshalReceipts(b.Receipts())
	if len(rs) != 4 {
		t.Fatalf("%d receipts", len(rs))
	}
	if err := VerifyReceipts(f.plan.Identity(), "run-1", rs); err != nil {
		t.Fatal(err)
	}
	return f, rs
}

func TestVerifyDetectsTampering(t *testing.T) {
	f, rs := runWithReceipts(t)
	tamper := map[string]func(m map[string]any){
		"outcome":         func(m map[string]any) { m["outcome"] = "error" },
		"capability":      func(m map[string]any) { m["capability"] = "other" },
		"request digest":  func(m map[string]any) { m["request_sha256"] = "sha256:" + strings.Repeat("0", 64) },
		"response digest": func(m map[string]any) { m["response_sha256"] = "sha256:" + strings.Repeat("1", 64) },
		"plan":            func(m map[string]any) { m["plan_sha256"] = "sha256:" + strings.Repeat("2", 64) },
		"run":             func(m map[string]any) { m["run_id"] = "run-2" },
		"index":           func(m map[string]any) { m["operation_index"] = 5 },
		"call id":         func(m map[string]any) { m["call_id"] = "toolu_9:program:7" },
		"parent":          func(m map[string]any) { m["parent_call_id"] = "other" },
		"extra field":     func(m map[string]any) { m["note"] = "hi" },
		"dropped id":      func(m map[string]any) { delete(m, "receipt_id") },
	}
	for name, f2 := range tamper {
		t.Run(name, func(t *testing.T) {
			var m map[string]any
			_ = json.Unmarshal(rs[0], &m)
			f2(m)
			changed, _ := json.Marshal(m)
			copyRs := append([]json.RawMessage(nil), rs...)
			copyRs[0] = changed
			if err := VerifyReceipts(f.plan.Identity(), "run-1", copyRs); err == nil {
				t.Fatal("tampering not detected")
			}
		})
	}
	t.Run("dropped receipt", func(t *testing.T) {
		if err := VerifyReceipts(f.plan.Identity(), "run-1", append(rs[:1:1], rs[2:]...)); err == nil {
			t.Fatal("a dropped receipt went unnoticed")
		}
	})
	t.Run("too many", func(t *testing.T) {
		many := make([]json.RawMessage, MaxReceipts+1)
		for i := range many {
			many[i] = rs[1]
		}
		err := VerifyReceipts(f.plan.Identity(), "run-1", many)
		if err == nil || !strings.Contains(err.Error(), CodeTooManyReceipts) {
			t.Fatal(err)
		}
	})
	t.Run("wrong plan", func(t *testing.T) {
		if err := VerifyReceipts("sha256:"+strings.Repeat("a", 64), "run-1", rs); err == nil {
			t.Fatal("plan binding not checked")
		}
	})
}

func TestGuestCannotAuthorHostFields(t *testing.T) {
	for _, f := range HostFields {
		if err := CheckGuestOutput(json.RawMessage(`{"answer":1,"` + f + `":[]}`)); err == nil {
			t.Errorf("guest field %s accepted", f)
		}
	}
	for _, ok := range []string{`{"answer":1}`, `[1,2]`, `"receipts"`, `{"data":{"receipts":[]}}`, ``} {
		if err := CheckGuestOutput(json.RawMessage(ok)); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
}
