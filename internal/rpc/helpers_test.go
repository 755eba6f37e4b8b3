package rpc

import (
	"context"
	"encoding/json"
	"os"
	"sync"
	"testing"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/broker/handlers"
	"github.com/apysup/apysup/internal/testenv"
	"github.com/apysup/apysup/plan"
)

const testPlan = "sha256:1111111111111111111111111111111111111111111111111111111111111111"

// fakeBroker answers like Broker.Call: echo for any capability, with a few
// capability names that misbehave on purpose.
//
//	fault.block      waits until release is closed (or the context ends)
//	fault.refuse     status "refused", error_code "call_id_reused"
//	fault.error      status "error", error_code "handler_failed"
//	fault.ambiguous  status "ambiguous", error_code "approval_audit_failed"
//	fault.panic      panics
//	fault.empty      returns no response (a transport failure)
type fakeBroker struct {
	entered chan string   // receives the call id of every fault.block call
	release chan struct{} // closing it lets fault.block calls return
	onCall  func(callID string)

	mu    sync.Mutex
	calls map[string]int
	order []string
	ctxs  []context.Context
}

func newFakeBroker() *fakeBroker {
	return &fakeBroker{entered: make(chan string, 64), release: make(chan struct{}), calls: map[string]int{}}
}

func (b *fakeBroker) Call(ctx context.Context, frame []byte) *broker.Response {
	var f struct {
		CallID     string          `json:"call_id"`
		Capability string          `json:"capability"`
		Arguments  json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(frame, &f); err != nil {
		return &broker.Response{SchemaVersion: broker.ResponseSchemaVersion, Status: "refused", ErrorCode: "malformed_frame", Message: "malformed"}
	}
	b.mu.Lock()
	b.calls[f.CallID]++
	b.order = append(b.order, f.CallID)
	b.ctxs = append(b.ctxs, ctx)
	b.mu.Unlock()
	if b.onCall != nil {
		b.onCall(f.CallID)
	}
	const receipt = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	answer := func(status, code string) *broker.Response {
		return &broker.Response{SchemaVersion: broker.ResponseSchemaVersion, CallID: f.CallID, Status: status, ErrorCode: code,
			Message: "fixed text", ReceiptID: receipt}
	}
	switch f.Capability {
	case "fault.block":
		select {
		case b.entered <- f.CallID:
		default: // nobody is watching (fuzzing)
		}
		select {
		case <-b.release:
		case <-ctx.Done():
			return answer("error", "cancelled")
		}
	case "fault.refuse":
		return answer("refused", "call_id_reused")
	case "fault.error":
		return answer("error", "handler_failed")
	case "fault.ambiguous":
		return answer("ambiguous", "approval_audit_failed")
	case "fault.panic":
		panic("handler exploded")
	case "fault.empty":
		return nil
	}
	args := f.Arguments
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	return &broker.Response{SchemaVersion: broker.ResponseSchemaVersion, CallID: f.CallID, Status: "ok", Result: args, ReceiptID: receipt}
}

func (b *fakeBroker) count(callID string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls[callID]
}

func (b *fakeBroker) total() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.order)
}

func (b *fakeBroker) callIDs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.order...)
}

// seal parses and seals a test manifest.
func seal(t testing.TB, manifest string) (*plan.Manifest, *plan.Plan) {
	t.Helper()
	m, err := plan.ParseManifest([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Seal(handlers.Checker{})
	if err != nil {
		t.Fatal(err)
	}
	return m, p
}

func needPython(t testing.TB) {
	t.Helper()
	_, err := os.Stat(HostPython)
	testenv.Need(t, err == nil, HostPython+" (apt-get install python3.11)")
}
