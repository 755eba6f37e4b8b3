package broker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apysup/apysup/internal/callctx"
	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/internal/pattern"
	"github.com/apysup/apysup/plan"
)

// Limits of one call (SPEC.md section 5).
const (
	MaxFrameBytes  = canonjson.MaxGuestBytes
	MaxResultBytes = 1 << 20
)

// Config builds a Broker for one run.
type Config struct {
	Plan     *plan.Plan
	RunID    string
	Surface  plan.Surface
	Parent   string // the parent call id on the programmatic and both surfaces
	Handlers *Handlers
	// Approvals decides calls to capabilities that require approval. Nil
	// means no approver: such calls are denied (approval_unavailable).
	Approvals *Approvals
	// Ledger records the run's events (the Broker appends each call's);
	// nil gives the Broker a ledger of its own. Observers watch it.
	Ledger *Ledger
	// Journal, when set, makes the run's calls durable (CallJournal): the
	// supervisor sets it for a run under an idempotency key.
	Journal CallJournal
}

// Broker admits, approves and dispatches the calls of one run.
type Broker struct {
	cfg Config

	mu         sync.Mutex
	used       map[string]bool
	admitted   int
	grantCalls map[string]int    // per capability: calls holding or having spent a place in its grant's max_calls
	policies   map[string]string // per capability: its grant's policy_sha256, bound into each call's EffectBinding
	nextProg   int
	receipts   []Receipt
	transcript []TranscriptEntry
	closed     bool
}

var runIDPattern = pattern.New("A-Za-z0-9", "A-Za-z0-9_.-", 128)

// New checks that every capability of the Plan has a handler of the right
// kind, and that a capability requiring strict acceptance has a Provider
// whose live profile declares every guarantee (AcceptanceError), then
// returns the run's Broker.
func New(cfg Config) (*Broker, error) {
	if cfg.Plan == nil || cfg.Handlers == nil {
		return nil, errors.New("broker: a Plan and Handlers are required")
	}
	if !runIDPattern.MatchString(cfg.RunID) {
		return nil, fmt.Errorf("broker: run id must match %s", runIDPattern)
	}
	if _, err := plan.ParseSurface(string(cfg.Surface)); err != nil {
		return nil, err
	}
	switch {
	case cfg.Surface == plan.SurfaceDirect && cfg.Parent != "":
		return nil, errors.New("broker: the direct surface takes no parent")
	case cfg.Surface != plan.SurfaceDirect && !plan.ParentPattern.MatchString(cfg.Parent):
		return nil, fmt.Errorf("broker: the %s surface needs a parent call id", cfg.Surface)
	}
	for _, c := range cfg.Plan.Capabilities() {
		h, ok := cfg.Handlers.lookup(c.Handler())
		if !ok {
			return nil, fmt.Errorf("broker: capability %s: no handler %s", c.Name(), c.Handler())
		}
		if _, isEvidence := h.(EvidenceHandler); c.Playback() == plan.PlaybackCaptured && !isEvidence {
			return nil, fmt.Errorf("broker: capability %s is captured but handler %s returns no evidence", c.Name(), c.Handler())
		}
		if err := checkAcceptance(c, h); err != nil {
			return nil, err
		}
	}
	policies := make(map[string]string)
	for _, g := range cfg.Plan.Grants() {
		policies[g.Capability] = g.PolicySHA256
	}
	if cfg.Ledger == nil {
		cfg.Ledger = NewLedger()
	}
	return &Broker{cfg: cfg, used: make(map[string]bool), grantCalls: make(map[string]int), policies: policies, nextProg: 1}, nil
}

// RunID is the run this Broker serves.
func (b *Broker) RunID() string { return b.cfg.RunID }

// PlanSHA256 is the identity of the bound Plan.
func (b *Broker) PlanSHA256() string { return b.cfg.Plan.Identity() }

// Call admits and, at most once, dispatches one call frame, and returns
// the broker response (ARCHITECTURE.md). It never returns an error: every
// refusal is a typed response. The Broker is a Dispatcher.
func (b *Broker) Call(ctx context.Context, frame []byte) *Response { return b.call(ctx, frame, false) }

// CallStreaming is Call for streaming calls, which may not use
// workspace_write capabilities.
func (b *Broker) CallStreaming(ctx context.Context, frame []byte) *Response {
	return b.call(ctx, frame, true)
}

// Close ends the run: later calls are refused. In-flight calls finish.
func (b *Broker) Close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
}

// Receipts returns the run's receipts in operation order.
func (b *Broker) Receipts() []Receipt {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Receipt(nil), b.receipts...)
}

// Transcript returns the captured-playback entries in operation order.
func (b *Broker) Transcript() []TranscriptEntry {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]TranscriptEntry(nil), b.transcript...)
}

// Dispatcher is the Broker as a transport sees it, for the channel
// (internal/rpc) and the wazero host call alike: one call frame in, one
// broker response out. A nil response (or a panic) leaves the outcome
// unknown to the guest. Call must return soon after ctx ends; approval
// waits happen inside it.
type Dispatcher interface {
	Call(ctx context.Context, frame []byte) *Response
}

// Response is the broker response to one call frame. Both transports carry
// its wire form (AppendJSON) to the guest, byte for byte, as the
// broker_response of a completed envelope; a receipt's response digest is
// over Result alone.
type Response struct {
	SchemaVersion string          `json:"schema_version"`
	CallID        string          `json:"call_id,omitempty"`
	Status        string          `json:"status"`
	ErrorCode     string          `json:"error_code,omitempty"`
	Message       string          `json:"message,omitempty"`
	Result        json.RawMessage `json:"result,omitempty"`
	ReceiptID     string          `json:"receipt_id,omitempty"`
}

// wireResponse is Response without its methods, for the encoder.
type wireResponse Response

// malformedResponse answers when a Result cannot be encoded (it was
// validated, so only a bug gets here).
const malformedResponse = `{"schema_version":"apysup.broker.v1","status":"ambiguous","error_code":"result_malformed"}`

// AppendJSON appends the response's wire form to dst: the fields in
// declaration order, no HTML escaping (the result stays byte-for-byte
// canonical), no trailing newline.
func (r *Response) AppendJSON(dst []byte) []byte {
	buf := bytes.NewBuffer(dst)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode((*wireResponse)(r)); err != nil {
		return append(dst, malformedResponse...)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// MarshalJSON returns AppendJSON's bytes (json.Marshal escapes <, > and &
// in them again; the transports use AppendJSON).
func (r *Response) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil), nil }

// ResponseSchemaVersion tags broker responses.
const ResponseSchemaVersion = "apysup.broker.v1"

// Response statuses.
const (
	StatusOK        = "ok"
	StatusError     = "error"
	StatusDenied    = "denied"
	StatusAmbiguous = "ambiguous"
	StatusRefused   = "refused"
)

func refused(callID, code string) *Response {
	return newResponse(Response{CallID: callID, Status: StatusRefused, ErrorCode: code})
}

// newResponse stamps the schema version and the code's fixed message.
func newResponse(r Response) *Response {
	r.SchemaVersion = ResponseSchemaVersion
	if r.ErrorCode != "" && r.Message == "" {
		r.Message = messages[r.ErrorCode]
	}
	return &r
}

// admitted is a call that passed steps 1-3 of admission.
type admittedCall struct {
	callID     string
	parent     string // set for programmatic calls
	capability string
	arguments  json.RawMessage
}

func (b *Broker) call(ctx context.Context, raw []byte, streaming bool) *Response {
	b.cfg.Ledger.Append(EventCallIntent, map[string]string{"frame_sha256": canonjson.PlainDigest(raw)})
	call, code := b.admit(raw)
	if code != "" {
		id := ""
		if call != nil {
			id = call.callID
		}
		b.cfg.Ledger.Append(EventCallRefused, map[string]string{"call_id": id, "error_code": code})
		return refused(id, code)
	}
	return b.dispatch(ctx, call, streaming)
}

// admit performs admission steps 1-3 (frame, origin, call id and budget).
// The returned call carries its id whenever the frame yielded one.
func (b *Broker) admit(raw []byte) (*admittedCall, string) {
	switch {
	case len(raw) == 0:
		return nil, CodeFrameEmpty
	case len(raw) > MaxFrameBytes:
		return nil, CodeFrameTooLarge
	}
	// The frame's three members, strictly: exact names, no others, each
	// present, the first two strings.
	parts, err := canonjson.Fields(raw, MaxFrameBytes, "call_id", "capability", "arguments")
	if err != nil {
		return nil, CodeFrameMalformed
	}
	callID, idOK := canonjson.String(parts[0])
	capability, capOK := canonjson.String(parts[1])
	if !idOK || !capOK || parts[2] == nil {
		return nil, CodeFrameMalformed
	}
	call := &admittedCall{callID: callID, capability: capability}
	if len(call.callID) > 256 {
		return nil, CodeInvalidCallID
	}
	if parts[2][0] != '{' {
		return call, CodeArgumentsNotObject
	}
	call.arguments = bytes.Clone(parts[2]) // the frame's bytes are the transport's

	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return call, CodeRunClosed
	}
	seq, isProgram, code := b.originLocked(call.callID)
	if code != "" {
		return call, code
	}
	if b.used[call.callID] {
		return call, CodeCallIDReused
	}
	if b.admitted >= b.cfg.Plan.MaxCalls() {
		return call, CodeMaxCallsExhausted
	}
	b.used[call.callID] = true
	b.admitted++
	if isProgram {
		b.nextProg = seq + 1
		call.parent = b.cfg.Parent
	}
	return call, ""
}

// originLocked classifies a call id: direct (capability-<n>) or
// programmatic (<parent>:program:<n>, exactly the next sequence).
func (b *Broker) originLocked(id string) (seq int, isProgram bool, code string) {
	if parent, n, ok := strings.Cut(id, ":program:"); ok {
		seq, valid := parseSeq(n)
		switch {
		case !valid || !plan.ParentPattern.MatchString(parent):
			return 0, true, CodeInvalidCallID
		case !b.cfg.Surface.AllowsProgram() || parent != b.cfg.Parent:
			return 0, true, CodeSurfaceForbidsProgram
		case seq != b.nextProg:
			return 0, true, CodeProgramSequence
		}
		return seq, true, ""
	}
	n, ok := strings.CutPrefix(id, "capability-")
	if _, valid := parseSeq(n); !ok || !valid {
		return 0, false, CodeInvalidCallID
	}
	if !b.cfg.Surface.AllowsDirect() {
		return 0, false, CodeSurfaceForbidsDirect
	}
	return 0, false, ""
}

// parseSeq accepts a decimal integer >= 1 without leading zeros.
func parseSeq(s string) (int, bool) {
	if s == "" || s[0] == '0' || len(s) > 9 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// RequestDigest is the request_sha256 of a call: the domain-separated
// digest of the canonical frame. The RPC idempotency table uses the same
// function, so "the same request" means one thing everywhere.
func RequestDigest(callID, capability string, canonicalArguments json.RawMessage) string {
	// {"arguments":...,"call_id":...,"capability":...}: keys in RFC 8785 order.
	doc := make([]byte, 0, len(canonicalArguments)+len(callID)+len(capability)+48)
	doc = append(doc, `{"arguments":`...)
	doc = append(doc, canonicalArguments...)
	doc = append(doc, `,"call_id":`...)
	doc = canonjson.AppendString(doc, callID)
	doc = append(doc, `,"capability":`...)
	doc = canonjson.AppendString(doc, capability)
	doc = append(doc, '}')
	return canonjson.Digest(canonjson.DomainRequest, doc)
}

// dispatch performs admission steps 4-8 (and the grant between 6 and 7)
// for an admitted call and ends in exactly one receipt, unless its grant
// refuses it (grant_denied, receipt-free).
func (b *Broker) dispatch(ctx context.Context, call *admittedCall, streaming bool) *Response {
	canonArgs, err := canonjson.CanonicalValidated(call.arguments) // the frame passed canonjson.Fields
	if err != nil {
		canonArgs = call.arguments
	}
	rc := &receiptDraft{call: call, requestSHA256: RequestDigest(call.callID, call.capability, canonArgs)}
	b.cfg.Ledger.Append(EventCallAdmitted, map[string]string{
		"call_id": call.callID, "parent_call_id": call.parent, "capability": call.capability, "request_sha256": rc.requestSHA256})

	capability, ok := b.cfg.Plan.Lookup(call.capability)
	if !ok {
		return b.finish(rc, StatusDenied, CodeUnknownCapability, nil)
	}
	if streaming && capability.Effect() == plan.EffectWorkspaceWrite {
		return b.finish(rc, StatusDenied, CodeStreamingForbidsWrite, nil)
	}
	args, err := canonjson.DecodeCanonical(canonArgs)
	if err != nil || capability.ValidateInput(args) != nil {
		return b.finish(rc, StatusDenied, CodeInputSchema, nil)
	}
	jc, code := b.journalIntent(ctx, rc)
	if code != "" {
		b.cfg.Ledger.Append(EventCallRefused, map[string]string{"call_id": call.callID, "error_code": code})
		return refused(call.callID, code)
	}
	rc.journaled = b.cfg.Journal != nil && jc.State != JournalCompleted && jc.State != JournalUnknown
	if message := b.admitGrant(rc, capability, args); message != "" {
		// Receipt-free, like every admission refusal: the call never
		// became an operation of the run. Its message names the refused
		// argument, never the grant; the ledger records the refusal.
		b.cfg.Ledger.Append(EventCallRefused, map[string]string{"call_id": call.callID, "error_code": CodeGrantDenied})
		resp := newResponse(Response{CallID: call.callID, Status: StatusRefused, ErrorCode: CodeGrantDenied, Message: message})
		if rc.journaled {
			b.journalComplete(rc, JournalCompletion{Outcome: StatusRefused, ErrorCode: CodeGrantDenied, Response: resp.AppendJSON(nil)})
		}
		return resp
	}
	switch jc.State { // after the grant: a replayed call still spends its place in the grant's max_calls
	case JournalCompleted:
		return b.replay(rc, jc)
	case JournalUnknown:
		return b.finishUnknown(ctx, rc, jc, capability, canonArgs)
	}

	if req := capability.Approval(); req != nil {
		var code string
		if jc.ApprovalState != "" { // decided in an earlier attempt: never asked twice
			rc.approvalID, rc.decisionReplayed = jc.ApprovalID, true
			code = recordedDecision(jc, time.Now())
		} else {
			code = b.awaitApproval(ctx, rc, capability, canonArgs, time.Duration(req.LeaseSeconds)*time.Second)
		}
		if code != "" {
			return b.finish(rc, StatusDenied, code, nil)
		}
	}
	h, _ := b.cfg.Handlers.lookup(capability.Handler())
	rc.binding = b.effectBinding(rc, capability, h)
	if code := b.beginDispatch(ctx, rc); code != "" {
		return b.finish(rc, StatusDenied, code, nil)
	}
	rc.dispatched = true

	// Past the commit point the handler runs: a caller that gives the
	// call up now does not cut it short, only the run's end does
	// (internal/callctx).
	ctx, release := callctx.Dispatched(ctx)
	defer release()
	ctx = withEffectBinding(ctx, rc.binding)
	b.cfg.Ledger.Append(EventCallDispatched, map[string]string{"call_id": call.callID, "approval_request_id": rc.approvalID})
	result, evidence, status, code := b.dispatchOnce(ctx, rc, h, capability, canonArgs)
	if rc.approvalID != "" && !rc.decisionReplayed {
		if err := b.cfg.Approvals.Complete(rc.approvalID, status); err != nil {
			status, code, result = StatusAmbiguous, CodeApprovalAuditFailed, nil
		}
	}
	if status == StatusOK && capability.Playback() == plan.PlaybackCaptured {
		b.recordTranscript(call, canonArgs, result, evidence)
	}
	return b.finish(rc, status, code, result)
}

// awaitApproval blocks inside the guest's own call until a decision. It
// returns a refusal code, or "" when the call was approved.
func (b *Broker) awaitApproval(ctx context.Context, rc *receiptDraft, c *plan.Capability, canonArgs []byte, lease time.Duration) string {
	if b.cfg.Approvals == nil {
		return CodeApprovalUnavailable
	}
	binding := ApprovalBinding{
		RunID: b.cfg.RunID, PlanSHA256: b.cfg.Plan.Identity(), ParentCallID: rc.call.parent, CallID: rc.call.callID,
		Capability: c.Name(), ArgumentsSHA256: canonjson.Digest(canonjson.DomainArguments, canonArgs),
	}
	rec, err := b.cfg.Approvals.Request(ApprovalRequest{ApprovalBinding: binding, Preview: string(canonArgs), Lease: lease})
	switch {
	case errors.Is(err, ErrApprovalAuditFull):
		return CodeApprovalAuditFull
	case err != nil:
		return CodeApprovalRecordInvalid
	}
	rc.approvalID, rc.approval = rec.ID, binding
	// The journal's writes are not the call's: a call that ends while they
	// are made is written all the same (journal_unavailable is the disk's).
	if b.cfg.Journal != nil {
		if err := b.cfg.Journal.AwaitApproval(context.WithoutCancel(ctx), rc.call.callID, rec.ID); err != nil {
			return CodeJournalUnavailable
		}
	}
	state, _ := b.cfg.Approvals.Wait(ctx, rec.ID)
	b.cfg.Ledger.Append(EventApprovalDecided, map[string]string{
		"call_id": rc.call.callID, "approval_request_id": rec.ID, "state": string(state)})
	// A cancellation is no decision (the call's context ended: its caller
	// gave it up, or the run is ending): it is not recorded, and a later
	// attempt asks again (leftAbsent).
	if b.cfg.Journal != nil && state != ApprovalCancelled {
		if err := b.cfg.Journal.Decide(context.WithoutCancel(ctx), rc.call.callID, rec.ID, state, rec.ExpiresAt); err != nil {
			return CodeJournalUnavailable
		}
	}
	return decisionCode(state)
}

// decisionCode is the refusal code of an approval decision, or "" for an
// approval.
func decisionCode(state ApprovalState) string {
	switch state {
	case ApprovalApproved:
		return ""
	case ApprovalRejected:
		return CodeApprovalRejected
	case ApprovalExpired:
		return CodeApprovalExpired
	}
	return CodeApprovalCancelled
}

// beginDispatch is the dispatch commit point of every call, approved or
// not: after it the handler runs, before it nothing has. A call whose
// context has ended by then is not dispatched (the run is ending; nobody
// waits for the result), and a call with an approval crosses its record's
// BeginDispatch, which decides under the controller's lock between the
// approval, the context and the lease. It returns a refusal code, or "".
func (b *Broker) beginDispatch(ctx context.Context, rc *receiptDraft) string {
	if b.cfg.Journal != nil && ctx.Err() == nil {
		// Durable before the approval's own commit point and the handler;
		// if that commit point then refuses, the call's denial completes
		// the record.
		if err := b.cfg.Journal.BeginDispatch(context.WithoutCancel(ctx), rc.call.callID, rc.binding); err != nil {
			return CodeJournalUnavailable
		}
	}
	if rc.approvalID == "" || rc.decisionReplayed {
		if ctx.Err() != nil {
			return CodeCallCancelled
		}
		return ""
	}
	switch err := b.cfg.Approvals.BeginDispatch(ctx, rc.approvalID, rc.approval); {
	case err == nil:
		return ""
	case errors.Is(err, ErrDispatchCancelled):
		return CodeApprovalCancelled
	case errors.Is(err, ErrDispatchExpired):
		return CodeApprovalExpired
	}
	return CodeApprovalRecordInvalid
}

// dispatchOnce sends the call to its handler: through Accept to a Provider
// when the capability asks for acceptance, else through invoke.
func (b *Broker) dispatchOnce(ctx context.Context, rc *receiptDraft, h any, c *plan.Capability, args json.RawMessage) (json.RawMessage, *TransportEvidence, string, string) {
	if p, ok := h.(Provider); ok && c.Acceptance() != plan.AcceptanceOff {
		o := b.accept(ctx, rc, p, c, args)
		return o.result, nil, o.status, o.code
	}
	result, ev, status, code := b.invoke(ctx, h, c, args)
	if code == CodeHandlerError && c.Acceptance() == plan.AcceptanceNoBlindRetry {
		// A handler that cannot be read back: its error may follow an
		// effect, and the call is never sent again.
		return nil, nil, StatusAmbiguous, CodeDispatchUnknown
	}
	return result, ev, status, code
}

// invoke calls the handler once and checks what it returned.
func (b *Broker) invoke(ctx context.Context, h any, c *plan.Capability, args json.RawMessage) (result json.RawMessage, ev *TransportEvidence, status, code string) {
	defer func() {
		if recover() != nil {
			result, ev, status, code = nil, nil, StatusAmbiguous, CodeHandlerPanicked
		}
	}()
	var err error
	if eh, ok := h.(EvidenceHandler); ok && c.Playback() == plan.PlaybackCaptured {
		var e TransportEvidence
		result, e, err = eh.CallWithEvidence(ctx, args)
		ev = &e
	} else {
		result, err = h.(Handler).Call(ctx, args)
	}
	if err != nil {
		return nil, nil, StatusError, CodeHandlerError
	}
	canonResult, status, code := checkResult(c, result)
	if status != StatusOK {
		return nil, nil, status, code
	}
	if c.Playback() == plan.PlaybackCaptured {
		if ev == nil || *ev == (TransportEvidence{}) {
			return nil, nil, StatusError, CodeEvidenceMissing
		}
		if !validEvidence(*ev) {
			return nil, nil, StatusError, CodeEvidenceInvalid
		}
	}
	return canonResult, ev, StatusOK, ""
}

// checkResult checks what a handler (or a Provider's decision) returned:
// at most 1 MiB of strict JSON valid for the output schema, canonicalised.
func checkResult(c *plan.Capability, result json.RawMessage) (json.RawMessage, string, string) {
	if len(result) > MaxResultBytes {
		return nil, StatusError, CodeResultTooLarge
	}
	canonResult, err := canonjson.Canonical(result)
	if err != nil {
		return nil, StatusError, CodeResultMalformed
	}
	decoded, _ := canonjson.DecodeCanonical(canonResult)
	if c.ValidateOutput(decoded) != nil {
		return nil, StatusError, CodeOutputSchema
	}
	return canonResult, StatusOK, ""
}

func validEvidence(e TransportEvidence) bool {
	return e.Kind == "http" && e.Status >= 100 && e.Status <= 599 && e.MediaType != "" && len(e.MediaType) <= 255 &&
		e.BodyBytes >= 0 && canonjson.IsDigest(e.BodySHA256)
}

func (b *Broker) recordTranscript(call *admittedCall, args, result json.RawMessage, ev *TransportEvidence) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.transcript = append(b.transcript, TranscriptEntry{
		CallID: call.callID, Capability: call.capability,
		ArgumentsSHA256: canonjson.Digest(canonjson.DomainArguments, args),
		ResultSHA256:    canonjson.Digest(canonjson.DomainResponse, result),
		Evidence:        *ev,
	})
}

// finish writes the receipt and the response.
func (b *Broker) finish(rc *receiptDraft, status, code string, result json.RawMessage) *Response {
	responseSHA256 := ""
	if status == StatusOK {
		responseSHA256 = canonjson.Digest(canonjson.DomainResponse, result)
	}
	return b.finishWith(rc, status, code, result, responseSHA256)
}

// finishWith writes the receipt and the response of a call whose result
// digest is known (a replayed call's is the recorded one), and records
// both in the journal.
func (b *Broker) finishWith(rc *receiptDraft, status, code string, result json.RawMessage, responseSHA256 string) *Response {
	r := Receipt{
		SchemaVersion: ReceiptSchemaVersion, RunID: b.cfg.RunID, PlanSHA256: b.cfg.Plan.Identity(),
		CallID: rc.call.callID, ParentCallID: rc.call.parent, ApprovalRequestID: rc.approvalID,
		Capability: rc.call.capability, RequestSHA256: rc.requestSHA256, Outcome: status, ErrorCode: code,
		ResponseSHA256: responseSHA256, Replayed: rc.replayed, ProviderReceiptSHA256: rc.providerReceipt(),
	}
	b.mu.Lock()
	r.OperationIndex = len(b.receipts)
	r.ReceiptID = r.computeID()
	b.receipts = append(b.receipts, r)
	b.releaseGrantLocked(rc, status)
	// Under the Broker's lock: the ledger's receipts are in operation order.
	b.cfg.Ledger.Append(EventCallReceipt, map[string]string{
		"call_id": r.CallID, "receipt_id": r.ReceiptID, "outcome": r.Outcome, "error_code": r.ErrorCode})
	b.mu.Unlock()
	resp := Response{CallID: rc.call.callID, Status: status, ErrorCode: code, ReceiptID: r.ReceiptID}
	if status == StatusOK {
		resp.Result = result
	}
	out := newResponse(resp)
	// Unknown stays unknown in the journal, for a later reconciliation; a
	// call cancelled before its dispatch stays absent, as after a crash.
	if rc.journaled && code != CodeDispatchUnknown && !leftAbsent(code) {
		b.journalComplete(rc, JournalCompletion{Outcome: status, ErrorCode: code, Response: out.AppendJSON(nil),
			Receipt: r.canonical(), ReceiptID: r.ReceiptID, Projection: rc.projection})
	}
	return out
}

type receiptDraft struct {
	call          *admittedCall
	requestSHA256 string
	approvalID    string
	approval      ApprovalBinding // what approvalID approves
	grantHeld     bool            // the call holds a place in its grant's max_calls
	binding       EffectBinding   // sealed before dispatch
	dispatched    bool            // the call crossed its dispatch commit point
	// A Provider's decision: its projection, or (a replayed call) the
	// reference an earlier attempt recorded.
	projection      *DecisionProjection
	replayedReceipt string
	// With a journal: journaled calls are recorded when they end; a
	// replayed call answers from an earlier attempt's record; a call with
	// a replayed decision skips the approval controller.
	journaled, replayed, decisionReplayed bool
}

// providerReceipt is the receipt's provider_receipt_sha256.
func (rc *receiptDraft) providerReceipt() string {
	if rc.projection != nil {
		return rc.projection.ReceiptSHA256
	}
	return rc.replayedReceipt
}
