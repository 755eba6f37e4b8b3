package broker

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/apysup/apysup/internal/canonjson"
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
		"provider ref":    func(m map[string]any) { m["provider_receipt_sha256"] = "sha256:" + strings.Repeat("3", 64) },
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

// TestEffectBindingCanonicalMatchesJCS: Seal's directly written documents
// (the binding, and the objects of its effect and authorization ids) are
// the RFC 8785 forms canonjson gives.
func TestEffectBindingCanonicalMatchesJCS(t *testing.T) {
	for _, b := range []EffectBinding{
		{},
		{RunID: "run-1", PlanSHA256: "sha256:ab", CallID: "p:program:1", Capability: "a.b",
			Handler: plan.HandlerIdentity{Kind: "kv", ID: "k", Version: "1", ConfigSHA256: "sha256:cd"}, PolicySHA256: "sha256:ef",
			ApprovalRequestID: "apr_1", RequestSHA256: "sha256:12", Acceptance: plan.AcceptanceStrict, ProviderID: "p", ProviderEpoch: "2"},
		{RunID: "run <&> \"x\"\n\x01é\u2028", CallID: "c", Handler: plan.HandlerIdentity{Version: "v<1>"}, Acceptance: plan.AcceptanceOff},
	} {
		sealed := b.Seal()
		if got, want := string(sealed.appendCanonical(nil)), string(canonjson.MustMarshal(sealed)); got != want {
			t.Errorf("binding\ngot  %s\nwant %s", got, want)
		}
		effect := canonjson.Digest(canonjson.DomainEffect, canonjson.MustMarshal(map[string]string{
			"call_id": b.CallID, "plan_sha256": b.PlanSHA256, "run_id": b.RunID}))
		auth := canonjson.Digest(canonjson.DomainAuthorization, canonjson.MustMarshal(map[string]string{
			"approval_request_id": b.ApprovalRequestID, "call_id": b.CallID, "policy_sha256": b.PolicySHA256, "run_id": b.RunID}))
		unsealed := sealed
		unsealed.BindingSHA256 = ""
		binding := canonjson.Digest(canonjson.DomainEffectBinding, canonjson.MustMarshal(unsealed))
		if sealed.EffectID != effect || sealed.AuthorizationID != auth || sealed.BindingSHA256 != binding {
			t.Errorf("identities of %+v differ from canonjson's", b)
		}
	}
}

func TestReceiptCanonicalMatchesJCS(t *testing.T) {
	for _, r := range []Receipt{
		{},
		{SchemaVersion: ReceiptSchemaVersion, RunID: "run-1", PlanSHA256: "sha256:ab", CallID: "p:program:1", ParentCallID: "p",
			ApprovalRequestID: "apr_1", Capability: "a.b", OperationIndex: 7, RequestSHA256: "sha256:cd", Outcome: "ok",
			ErrorCode: "x", ResponseSHA256: "sha256:ef", ReceiptID: "sha256:00", Replayed: true, ProviderReceiptSHA256: "sha256:12"},
		{CallID: "c", ProviderReceiptSHA256: "sha256:34"},
		{CallID: "c", Replayed: true},
		{CallID: "weird \"id\"\n\x01é", Capability: "\u2028", OperationIndex: 255},
	} {
		if got, want := string(r.canonical()), string(canonjson.MustMarshal(r)); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
	if got, want := RequestDigest("c\"1", "cap", json.RawMessage(`{"a":1}`)),
		canonjson.Digest(canonjson.DomainRequest, canonjson.MustMarshal(map[string]any{"call_id": "c\"1", "capability": "cap", "arguments": map[string]any{"a": 1}})); got != want {
		t.Errorf("request digest %s != %s", got, want)
	}
}

// The documents that are only digested are written into buffers on the
// stack: sealing a binding allocates its three digest strings and nothing
// else, a receipt id and an event digest one string each.
func TestDigestedDocumentsStayOnTheStack(t *testing.T) {
	b := EffectBinding{RunID: "run-1", PlanSHA256: "sha256:ab", CallID: "p:program:1", Capability: "a.b",
		Handler: plan.HandlerIdentity{Kind: "kv", ID: "k", Version: "1", ConfigSHA256: "sha256:cd"}, PolicySHA256: "sha256:ef",
		ApprovalRequestID: "apr_1", RequestSHA256: "sha256:12", Acceptance: plan.AcceptanceStrict}
	r := Receipt{SchemaVersion: ReceiptSchemaVersion, RunID: "run-1", PlanSHA256: "sha256:ab", CallID: "p:program:1",
		Capability: "a.b", OperationIndex: 7, RequestSHA256: "sha256:cd", Outcome: "ok", ResponseSHA256: "sha256:ef"}
	e := Event{Seq: 3, Prev: "sha256:ab", Kind: EventCallAdmitted,
		Body: map[string]string{"call_id": "p:program:1", "capability": "a.b", "request_sha256": "sha256:cd"}}
	for _, tc := range []struct {
		name string
		f    func()
		want float64
	}{
		{"Seal", func() { _ = b.Seal() }, 3},
		{"Receipt.computeID", func() { _ = r.computeID() }, 1},
		{"Event.computeDigest", func() { _ = e.computeDigest() }, 1},
	} {
		if got := testing.AllocsPerRun(100, tc.f); got > tc.want {
			t.Errorf("%s allocates %v times, want %v", tc.name, got, tc.want)
		}
	}
}
