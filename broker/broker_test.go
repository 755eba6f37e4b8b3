package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/plan"
)

// counting wraps a handler and counts dispatches.
type counting struct {
	n       atomic.Int64
	lateCtx atomic.Int64 // dispatches whose context had ended when they began
	result  json.RawMessage
	err     error
	panics  bool
	block   chan struct{} // when set, Call waits on it
}

func (c *counting) Call(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	c.n.Add(1)
	if ctx.Err() != nil {
		c.lateCtx.Add(1)
	}
	if c.block != nil {
		<-c.block
	}
	if c.panics {
		panic("handler bug")
	}
	if c.result != nil || c.err != nil {
		return c.result, c.err
	}
	return json.RawMessage(`{"echo":` + string(args) + `}`), nil
}

type captured struct {
	n        atomic.Int64
	evidence TransportEvidence
}

func (c *captured) CallWithEvidence(ctx context.Context, args json.RawMessage) (json.RawMessage, TransportEvidence, error) {
	c.n.Add(1)
	return json.RawMessage(`{"body":"hello"}`), c.evidence, nil
}

func handlerID(t testing.TB, id string) plan.HandlerIdentity {
	h, err := plan.NewHandlerIdentity("test", id, "1", nil)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

type fixture struct {
	plan      *plan.Plan
	handlers  *Handlers
	echo      *counting
	writer    *counting
	approved  *counting
	typed     *counting
	capture   *captured
	limited   *counting // under a grant with arguments and max_calls
	gated     *counting // needs approval, under a grant
	checked   *checking // a handler with its own grant check
	approvals *Approvals
}

// grants of the fixture's capabilities; the others have {}.
var fixtureGrants = map[string]string{
	"limited": `{"arguments":{"properties":{"city":{"enum":["Paris","Oslo"]},"tags":{"items":{"maxLength":3}}}},"max_calls":2}`,
	"gated":   `{"arguments":{"properties":{"text":{"maxLength":5}}},"max_calls":1}`,
}

// checking refuses {"key": "forbidden"} in its own grant check.
type checking struct{ counting }

func (c *checking) CheckGrant(args any) (string, bool) {
	if m, _ := args.(map[string]any); m["key"] == "forbidden" {
		return "/key", false
	}
	return "", true
}

func newFixture(t testing.TB, maxCalls int) *fixture {
	t.Helper()
	f := &fixture{
		echo: &counting{}, writer: &counting{}, approved: &counting{}, typed: &counting{result: json.RawMessage(`{"n":"not a number"}`)},
		limited: &counting{}, gated: &counting{}, checked: &checking{},
		capture:  &captured{evidence: TransportEvidence{Kind: "http", Status: 200, MediaType: "application/json", BodyBytes: 17, BodySHA256: canonjson.PlainDigest([]byte(`{"body":"hello"}`))}},
		handlers: NewHandlers(), approvals: NewApprovals(ApprovalOptions{}),
	}
	r, err := plan.NewRegistry(maxCalls)
	if err != nil {
		t.Fatal(err)
	}
	add := func(name string, effect plan.Effect, playback plan.Playback, id string, h any, in, out string, approval *plan.Approval) {
		hid := handlerID(t, id)
		if err := f.handlers.Add(hid, h); err != nil {
			t.Fatal(err)
		}
		if err := r.Register(plan.Spec{Name: name, Version: "1", Effect: effect, Playback: playback, Handler: hid,
			InputSchema: json.RawMessage(in), OutputSchema: json.RawMessage(out), Approval: approval}); err != nil {
			t.Fatal(err)
		}
		policy := fixtureGrants[name]
		if policy == "" {
			policy = `{}`
		}
		g, err := plan.NewGrant(json.RawMessage(policy))
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Bind(name, g); err != nil {
			t.Fatal(err)
		}
	}
	obj := `{"type":"object"}`
	add("echo", plan.EffectRead, plan.PlaybackLive, "echo", f.echo, `{"type":"object","properties":{"x":{"type":"integer"}},"additionalProperties":false}`, obj, nil)
	add("files.write", plan.EffectWorkspaceWrite, plan.PlaybackLive, "writer", f.writer, obj, obj, nil)
	add("notes.put", plan.EffectWrite, plan.PlaybackLive, "approved", f.approved, obj, obj, &plan.Approval{LeaseSeconds: 60})
	add("typed", plan.EffectRead, plan.PlaybackLive, "typed", f.typed, obj, `{"type":"object","properties":{"n":{"type":"integer"}}}`, nil)
	add("web.get", plan.EffectExternal, plan.PlaybackCaptured, "capture", f.capture, obj, obj, nil)
	add("limited", plan.EffectRead, plan.PlaybackLive, "limited", f.limited,
		`{"type":"object","properties":{"city":{"type":"string"},"tags":{"type":"array"}},"additionalProperties":false}`, obj, nil)
	add("gated", plan.EffectWrite, plan.PlaybackLive, "gated", f.gated, `{"type":"object","properties":{"text":{"type":"string"}}}`, obj, &plan.Approval{LeaseSeconds: 60})
	add("checked", plan.EffectRead, plan.PlaybackLive, "checked", f.checked, obj, obj, nil)
	if f.plan, err = r.Seal(); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) broker(t testing.TB, surface plan.Surface, parent string) *Broker {
	t.Helper()
	b, err := New(Config{Plan: f.plan, RunID: "run-1", Surface: surface, Parent: parent, Handlers: f.handlers, Approvals: f.approvals})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (f *fixture) dispatches() int64 {
	return f.echo.n.Load() + f.writer.n.Load() + f.approved.n.Load() + f.typed.n.Load() + f.capture.n.Load() +
		f.limited.n.Load() + f.gated.n.Load() + f.checked.n.Load()
}

type decoded struct {
	SchemaVersion string          `json:"schema_version"`
	CallID        string          `json:"call_id"`
	Status        string          `json:"status"`
	ErrorCode     string          `json:"error_code"`
	Message       string          `json:"message"`
	Result        json.RawMessage `json:"result"`
	ReceiptID     string          `json:"receipt_id"`
}

// decode reads a response back from its wire form, strictly.
func decode(t testing.TB, r *Response) decoded {
	t.Helper()
	raw := r.AppendJSON(nil)
	var d decoded
	if err := canonjson.DecodeStrict(raw, 2<<20, &d); err != nil {
		t.Fatalf("broker response %s: %v", raw, err)
	}
	return d
}

func frameOf(callID, capability, args string) []byte {
	return []byte(`{"call_id":"` + callID + `","capability":"` + capability + `","arguments":` + args + `}`)
}

func TestAdmissionRefusalsDispatchNothing(t *testing.T) {
	big := `{"x":"` + strings.Repeat("a", MaxFrameBytes) + `"}`
	cases := []struct {
		name    string
		surface plan.Surface
		parent  string
		setup   func(b *Broker)
		frame   []byte
		status  string
		code    string
	}{
		{"empty frame", plan.SurfaceBoth, "p", nil, nil, StatusRefused, CodeFrameEmpty},
		{"oversize frame", plan.SurfaceBoth, "p", nil, frameOf("capability-1", "echo", big), StatusRefused, CodeFrameTooLarge},
		{"not json", plan.SurfaceBoth, "p", nil, []byte(`{call}`), StatusRefused, CodeFrameMalformed},
		{"duplicate key", plan.SurfaceBoth, "p", nil, []byte(`{"call_id":"capability-1","call_id":"capability-2","capability":"echo","arguments":{}}`), StatusRefused, CodeFrameMalformed},
		{"nested duplicate key", plan.SurfaceBoth, "p", nil, frameOf("capability-1", "echo", `{"x":1,"x":2}`), StatusRefused, CodeFrameMalformed},
		{"unknown field", plan.SurfaceBoth, "p", nil, []byte(`{"call_id":"capability-1","capability":"echo","arguments":{},"receipt":{}}`), StatusRefused, CodeFrameMalformed},
		{"case variant of a field", plan.SurfaceBoth, "p", nil, []byte(`{"call_id":"capability-1","Call_ID":"capability-2","capability":"echo","arguments":{}}`), StatusRefused, CodeFrameMalformed},
		{"missing arguments", plan.SurfaceBoth, "p", nil, []byte(`{"call_id":"capability-1","capability":"echo"}`), StatusRefused, CodeFrameMalformed},
		{"invalid utf8", plan.SurfaceBoth, "p", nil, []byte("{\"call_id\":\"capability-1\",\"capability\":\"echo\",\"arguments\":{\"x\":\"\xff\"}}"), StatusRefused, CodeFrameMalformed},
		{"arguments array", plan.SurfaceBoth, "p", nil, frameOf("capability-1", "echo", `[1]`), StatusRefused, CodeArgumentsNotObject},
		{"arguments null", plan.SurfaceBoth, "p", nil, frameOf("capability-1", "echo", `null`), StatusRefused, CodeArgumentsNotObject},
		{"bad call id", plan.SurfaceBoth, "p", nil, frameOf("call-1", "echo", `{}`), StatusRefused, CodeInvalidCallID},
		{"leading zero", plan.SurfaceBoth, "p", nil, frameOf("capability-01", "echo", `{}`), StatusRefused, CodeInvalidCallID},
		{"zero", plan.SurfaceBoth, "p", nil, frameOf("capability-0", "echo", `{}`), StatusRefused, CodeInvalidCallID},
		{"direct on programmatic", plan.SurfaceProgrammatic, "p", nil, frameOf("capability-1", "echo", `{}`), StatusRefused, CodeSurfaceForbidsDirect},
		{"program on direct", plan.SurfaceDirect, "", nil, frameOf("p:program:1", "echo", `{}`), StatusRefused, CodeSurfaceForbidsProgram},
		{"other parent", plan.SurfaceProgrammatic, "p", nil, frameOf("q:program:1", "echo", `{}`), StatusRefused, CodeSurfaceForbidsProgram},
		{"skipped sequence", plan.SurfaceProgrammatic, "p", nil, frameOf("p:program:2", "echo", `{}`), StatusRefused, CodeProgramSequence},
		{"program id malformed", plan.SurfaceProgrammatic, "p", nil, frameOf("p:program:x", "echo", `{}`), StatusRefused, CodeInvalidCallID},
		{"reused id", plan.SurfaceDirect, "", func(b *Broker) { b.Call(context.Background(), frameOf("capability-1", "nope", `{}`)) },
			frameOf("capability-1", "echo", `{}`), StatusRefused, CodeCallIDReused},
		{"replayed program id", plan.SurfaceProgrammatic, "p", func(b *Broker) { b.Call(context.Background(), frameOf("p:program:1", "nope", `{}`)) },
			frameOf("p:program:1", "echo", `{}`), StatusRefused, CodeProgramSequence},
		{"max calls", plan.SurfaceDirect, "", func(b *Broker) {
			for i := 1; i <= 3; i++ {
				b.Call(context.Background(), frameOf("capability-"+string(rune('0'+i)), "nope", `{}`))
			}
		}, frameOf("capability-9", "echo", `{}`), StatusRefused, CodeMaxCallsExhausted},
		{"closed run", plan.SurfaceDirect, "", func(b *Broker) { b.Close() }, frameOf("capability-1", "echo", `{}`), StatusRefused, CodeRunClosed},
		{"unknown capability", plan.SurfaceDirect, "", nil, frameOf("capability-1", "nope", `{}`), StatusDenied, CodeUnknownCapability},
		{"schema violation", plan.SurfaceDirect, "", nil, frameOf("capability-1", "echo", `{"x":"one"}`), StatusDenied, CodeInputSchema},
		{"schema extra field", plan.SurfaceDirect, "", nil, frameOf("capability-1", "echo", `{"y":1}`), StatusDenied, CodeInputSchema},
		{"grant refuses an argument", plan.SurfaceDirect, "", nil, frameOf("capability-1", "limited", `{"city":"Berlin"}`), StatusRefused, CodeGrantDenied},
		{"grant refuses an array item", plan.SurfaceDirect, "", nil, frameOf("capability-1", "limited", `{"tags":["abcd"]}`), StatusRefused, CodeGrantDenied},
		{"grant refuses before approval", plan.SurfaceDirect, "", nil, frameOf("capability-1", "gated", `{"text":"too long"}`), StatusRefused, CodeGrantDenied},
		{"handler's grant check", plan.SurfaceDirect, "", nil, frameOf("capability-1", "checked", `{"key":"forbidden"}`), StatusRefused, CodeGrantDenied},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 3)
			b := f.broker(t, tc.surface, tc.parent)
			if tc.setup != nil {
				tc.setup(b)
			}
			got := decode(t, b.Call(context.Background(), tc.frame))
			if got.Status != tc.status || got.ErrorCode != tc.code {
				t.Fatalf("got %s/%s, want %s/%s", got.Status, got.ErrorCode, tc.status, tc.code)
			}
			if got.Message == "" || strings.Contains(got.Message, "aaaa") {
				t.Fatalf("message %q", got.Message)
			}
			if n := f.dispatches(); n != 0 {
				t.Fatalf("%d dispatches", n)
			}
			if (got.Status == StatusDenied) != (got.ReceiptID != "") {
				t.Fatalf("denied calls carry a receipt, refusals none: %+v", got)
			}
		})
	}
}

func TestStreamingRefusesWorkspaceWrite(t *testing.T) {
	f := newFixture(t, 4)
	b := f.broker(t, plan.SurfaceDirect, "")
	got := decode(t, b.CallStreaming(context.Background(), frameOf("capability-1", "files.write", `{}`)))
	if got.Status != StatusDenied || got.ErrorCode != CodeStreamingForbidsWrite || f.writer.n.Load() != 0 {
		t.Fatalf("%+v, %d dispatches", got, f.writer.n.Load())
	}
	got = decode(t, b.CallStreaming(context.Background(), frameOf("capability-2", "echo", `{"x":1}`)))
	if got.Status != StatusOK || string(got.Result) != `{"echo":{"x":1}}` {
		t.Fatalf("streaming read: %+v", got)
	}
	got = decode(t, b.Call(context.Background(), frameOf("capability-3", "files.write", `{}`)))
	if got.Status != StatusOK || f.writer.n.Load() != 1 {
		t.Fatalf("non-streaming write: %+v", got)
	}
}

func TestOKCallAndReceipt(t *testing.T) {
	f := newFixture(t, 4)
	b := f.broker(t, plan.SurfaceBoth, "toolu_1")
	got := decode(t, b.Call(context.Background(), frameOf("toolu_1:program:1", "echo", `{ "x" : 7 }`)))
	if got.Status != StatusOK || string(got.Result) != `{"echo":{"x":7}}` || got.CallID != "toolu_1:program:1" {
		t.Fatalf("%+v", got)
	}
	rs := b.Receipts()
	if len(rs) != 1 {
		t.Fatalf("%d receipts", len(rs))
	}
	r := rs[0]
	if r.ReceiptID != got.ReceiptID || r.ParentCallID != "toolu_1" || r.PlanSHA256 != f.plan.Identity() || r.Outcome != StatusOK ||
		r.RequestSHA256 != RequestDigest("toolu_1:program:1", "echo", json.RawMessage(`{"x":7}`)) ||
		r.ResponseSHA256 != canonjson.Digest(canonjson.DomainResponse, []byte(`{"echo":{"x":7}}`)) {
		t.Fatalf("receipt %+v", r)
	}
	raw, _ := json.Marshal(r)
	if strings.Contains(string(raw), `"x"`) {
		t.Fatal("arguments leaked into the receipt")
	}
	// Direct and programmatic ids interleave on the both surface.
	if got := decode(t, b.Call(context.Background(), frameOf("capability-1", "echo", `{}`))); got.Status != StatusOK {
		t.Fatalf("%+v", got)
	}
	if got := decode(t, b.Call(context.Background(), frameOf("toolu_1:program:2", "echo", `{}`))); got.Status != StatusOK {
		t.Fatalf("%+v", got)
	}
	if err := VerifyReceipts(f.plan.Identity(), "run-1", MarshalReceipts(b.Receipts())); err != nil {
		t.Fatal(err)
	}
}

func TestHandlerFailures(t *testing.T) {
	cases := []struct {
		name         string
		capability   string
		setup        func(f *fixture)
		status, code string
	}{
		{"handler error", "echo", func(f *fixture) { f.echo.err = errors.New("boom secret") }, StatusError, CodeHandlerError},
		{"handler panic", "echo", func(f *fixture) { f.echo.panics = true }, StatusAmbiguous, CodeHandlerPanicked},
		{"result too large", "echo", func(f *fixture) {
			f.echo.result = json.RawMessage(`{"x":"` + strings.Repeat("a", MaxResultBytes) + `"}`)
		}, StatusError, CodeResultTooLarge},
		{"result malformed", "echo", func(f *fixture) { f.echo.result = json.RawMessage(`{"a":1,"a":2}`) }, StatusError, CodeResultMalformed},
		{"output schema", "typed", nil, StatusError, CodeOutputSchema},
		{"evidence missing", "web.get", func(f *fixture) { f.capture.evidence = TransportEvidence{} }, StatusError, CodeEvidenceMissing},
		{"evidence invalid", "web.get", func(f *fixture) { f.capture.evidence.BodySHA256 = "https://secret.example/" }, StatusError, CodeEvidenceInvalid},
		{"evidence kind", "web.get", func(f *fixture) { f.capture.evidence.Kind = "smtp" }, StatusError, CodeEvidenceInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 4)
			if tc.setup != nil {
				tc.setup(f)
			}
			b := f.broker(t, plan.SurfaceDirect, "")
			resp := b.Call(context.Background(), frameOf("capability-1", tc.capability, `{}`))
			got, raw := decode(t, resp), resp.AppendJSON(nil)
			if got.Status != tc.status || got.ErrorCode != tc.code || got.Result != nil {
				t.Fatalf("%+v", got)
			}
			if strings.Contains(string(raw), "secret") {
				t.Fatal("handler internals leaked")
			}
			if f.dispatches() != 1 {
				t.Fatalf("%d dispatches", f.dispatches())
			}
			if rs := b.Receipts(); len(rs) != 1 || rs[0].Outcome != tc.status || rs[0].ResponseSHA256 != "" {
				t.Fatalf("receipts %+v", rs)
			}
		})
	}
}

func TestCapturedTranscriptHoldsDigestsOnly(t *testing.T) {
	f := newFixture(t, 4)
	b := f.broker(t, plan.SurfaceDirect, "")
	if got := decode(t, b.Call(context.Background(), frameOf("capability-1", "web.get", `{"url_hint":"q"}`))); got.Status != StatusOK {
		t.Fatalf("%+v", got)
	}
	tr := b.Transcript()
	if len(tr) != 1 || tr[0].Evidence != f.capture.evidence || !canonjson.IsDigest(tr[0].ArgumentsSHA256) || !canonjson.IsDigest(tr[0].ResultSHA256) {
		t.Fatalf("%+v", tr)
	}
	raw, _ := json.Marshal(tr[0])
	var keys map[string]any
	_ = json.Unmarshal(raw, &keys)
	ev := keys["evidence"].(map[string]any)
	if len(keys) != 5 || len(ev) != 5 || strings.Contains(string(raw), "url_hint") {
		t.Fatalf("transcript carries more than digests and evidence: %s", raw)
	}
}

func TestConcurrentDuplicateCallIDDispatchesOnce(t *testing.T) {
	f := newFixture(t, 256)
	b := f.broker(t, plan.SurfaceDirect, "")
	var wg sync.WaitGroup
	var ok, reused atomic.Int64
	start := make(chan struct{})
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			got := decode(t, b.Call(context.Background(), frameOf("capability-7", "echo", `{"x":1}`)))
			switch {
			case got.Status == StatusOK:
				ok.Add(1)
			case got.ErrorCode == CodeCallIDReused:
				reused.Add(1)
			default:
				t.Errorf("unexpected %+v", got)
			}
		}()
	}
	close(start)
	wg.Wait()
	if f.echo.n.Load() != 1 || ok.Load() != 1 || reused.Load() != 99 {
		t.Fatalf("dispatches %d ok %d reused %d", f.echo.n.Load(), ok.Load(), reused.Load())
	}
}

// TestObserversNeverGate: observers see every event of the ledger, in
// order, off the call path. One that panics, fails or blocks for good
// changes nothing and delays nothing; what a blocked one missed is counted.
func TestObserversNeverGate(t *testing.T) {
	f := newFixture(t, 4)
	var kinds []string
	var mu sync.Mutex
	seen := make(chan struct{}, 64)
	stuck := make(chan struct{})
	defer close(stuck)
	ledger := NewLedger(
		ObserverFunc(func(Event) error { panic("observer bug") }),
		ObserverFunc(func(Event) error { return errors.New("observer down") }),
		ObserverFunc(func(Event) error { <-stuck; return nil }),
		ObserverFunc(func(e Event) error {
			mu.Lock()
			defer mu.Unlock()
			raw, _ := json.Marshal(e)
			if strings.Contains(string(raw), "424242") {
				t.Error("an event carries a body")
			}
			kinds = append(kinds, e.Kind)
			select {
			case seen <- struct{}{}:
			default:
			}
			return nil
		}),
	)
	defer ledger.Close()
	b, err := New(Config{Plan: f.plan, RunID: "run-1", Surface: plan.SurfaceDirect, Handlers: f.handlers, Ledger: ledger})
	if err != nil {
		t.Fatal(err)
	}
	// A blocked observer on the call path would hang the first call here.
	for i := 1; i <= ObserverQueue; i++ { // more events than the stuck observer's queue holds
		got := decode(t, b.Call(context.Background(), frameOf(fmt.Sprintf("capability-%d", i), "echo", `{"x":424242}`)))
		if got.Status != StatusOK && got.ErrorCode != CodeMaxCallsExhausted {
			t.Fatalf("%+v", got)
		}
	}
	for range 4 {
		<-seen
	}
	mu.Lock()
	first := strings.Join(kinds[:4], ",")
	mu.Unlock()
	if first != "call_intent,call_admitted,call_dispatched,call_receipt" {
		t.Fatalf("events %v", first)
	}
	if f.echo.n.Load() != 4 || ledger.Missed() == 0 {
		t.Fatalf("dispatches %d, missed %d (the blocked observer's queue overflowed)", f.echo.n.Load(), ledger.Missed())
	}
}

// A call whose context has ended by the dispatch commit point is not
// dispatched, approval or not: a denied receipt (call_cancelled), no
// call_dispatched event, nothing ran. Admission refusals still come first.
func TestCancelledCallIsNotDispatched(t *testing.T) {
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		capability, args string
		status, code     string
	}{
		{"echo", `{"x":1}`, StatusDenied, CodeCallCancelled},
		{"files.write", `{}`, StatusDenied, CodeCallCancelled},
		{"web.get", `{}`, StatusDenied, CodeCallCancelled},
		{"notes.put", `{}`, StatusDenied, CodeApprovalCancelled}, // its approval never waits: Wait sees the context end
		{"nope", `{}`, StatusDenied, CodeUnknownCapability},
		{"echo", `{"x":"one"}`, StatusDenied, CodeInputSchema},
	} {
		f := newFixture(t, 4)
		ledger := NewLedger()
		b, err := New(Config{Plan: f.plan, RunID: "run-1", Surface: plan.SurfaceDirect, Handlers: f.handlers, Approvals: f.approvals,
			Ledger: ledger})
		if err != nil {
			t.Fatal(err)
		}
		got := decode(t, b.Call(gone, frameOf("capability-1", tc.capability, tc.args)))
		rs := b.Receipts()
		if got.Status != tc.status || got.ErrorCode != tc.code || f.dispatches() != 0 ||
			len(rs) != 1 || rs[0].Outcome != tc.status || rs[0].ErrorCode != tc.code || slices.Contains(kindsOf(ledger.Events()), EventCallDispatched) {
			t.Errorf("%s: %+v, %d dispatches, receipts %+v, events %v", tc.capability, got, f.dispatches(), rs, kindsOf(ledger.Events()))
		}
	}
}

func TestNewRefusesMissingHandlers(t *testing.T) {
	f := newFixture(t, 4)
	if _, err := New(Config{Plan: f.plan, RunID: "run-1", Surface: plan.SurfaceDirect, Handlers: NewHandlers()}); err == nil {
		t.Fatal("broker built without handlers")
	}
	hs := NewHandlers()
	for _, c := range f.plan.Capabilities() {
		if err := hs.Add(c.Handler(), &counting{}); err != nil { // a live handler for the captured one too
			t.Fatal(err)
		}
	}
	if _, err := New(Config{Plan: f.plan, RunID: "run-1", Surface: plan.SurfaceDirect, Handlers: hs}); err == nil {
		t.Fatal("captured capability accepted a live handler")
	}
	for _, bad := range []Config{
		{Plan: f.plan, RunID: "run-1", Surface: "weird", Handlers: f.handlers},
		{Plan: f.plan, RunID: "run-1", Surface: plan.SurfaceDirect, Parent: "p", Handlers: f.handlers},
		{Plan: f.plan, RunID: "run-1", Surface: plan.SurfaceProgrammatic, Handlers: f.handlers},
		{Plan: f.plan, RunID: "bad run id", Surface: plan.SurfaceDirect, Handlers: f.handlers},
	} {
		if _, err := New(bad); err == nil {
			t.Fatalf("accepted %+v", bad)
		}
	}
}

func TestEcho(t *testing.T) {
	out, err := Echo{}.Call(context.Background(), json.RawMessage(`{"a":1}`))
	if err != nil || string(out) != `{"echo":{"a":1}}` {
		t.Fatalf("%s %v", out, err)
	}
	if EchoIdentity().String() != "builtin/echo@1" {
		t.Fatal(EchoIdentity())
	}
}

func kindsOf(events []Event) []string {
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, e.Kind)
	}
	return kinds
}

// The wire form is pinned: fields in declaration order, empty ones left
// out, no HTML escaping, appended after what dst holds, and MarshalJSON
// gives the same bytes (json.Marshal would then escape <, > and &).
func TestResponseWireForm(t *testing.T) {
	for _, tc := range []struct {
		r    *Response
		want string
	}{
		{newResponse(Response{CallID: "capability-1", Status: StatusOK, Result: json.RawMessage(`{"a":"<&>"}`), ReceiptID: "sha256:00"}),
			`{"schema_version":"apysup.broker.v1","call_id":"capability-1","status":"ok","result":{"a":"<&>"},"receipt_id":"sha256:00"}`},
		{refused("", CodeFrameMalformed),
			`{"schema_version":"apysup.broker.v1","status":"refused","error_code":"frame_malformed","message":"` + messages[CodeFrameMalformed] + `"}`},
		{&Response{Status: StatusOK, Result: json.RawMessage(`{bad`)}, malformedResponse},
	} {
		if got := string(tc.r.AppendJSON([]byte("x"))); got != "x"+tc.want {
			t.Errorf("AppendJSON = %s\nwant x%s", got, tc.want)
		}
		if got, err := tc.r.MarshalJSON(); err != nil || string(got) != tc.want {
			t.Errorf("MarshalJSON = %s, %v\nwant %s", got, err, tc.want)
		}
	}
}
