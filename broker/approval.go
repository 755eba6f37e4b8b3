package broker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/plan"
)

// ApprovalState is the decision of one approval record. It leaves waiting
// once, and a decided record never changes state again.
type ApprovalState string

const (
	ApprovalWaiting   ApprovalState = "waiting"
	ApprovalApproved  ApprovalState = "approved"
	ApprovalRejected  ApprovalState = "rejected"
	ApprovalExpired   ApprovalState = "expired"
	ApprovalCancelled ApprovalState = "cancelled"
)

// DispatchState is what became of an approved call (see ApprovalRecord).
type DispatchState string

const (
	DispatchNone      DispatchState = "none"       // not dispatched, or not yet
	DispatchStarted   DispatchState = "dispatched" // past BeginDispatch: the handler runs
	DispatchCompleted DispatchState = "completed"  // Complete recorded the outcome
	DispatchAmbiguous DispatchState = "ambiguous"  // the handler ran; its completion audit failed
	DispatchCancelled DispatchState = "cancelled"  // approved, but the call's context ended before dispatch: nothing ran
	DispatchExpired   DispatchState = "expired"    // approved, but the lease ran out before dispatch: nothing ran
)

// Lease bounds (SPEC.md section 5).
const (
	MinLease = time.Second
	MaxLease = 24 * time.Hour
	// DefaultMaxApprovalRecords bounds the audit.
	DefaultMaxApprovalRecords = 1024
	// MaxPreviewBytes bounds the human-readable preview shown to approvers.
	MaxPreviewBytes = 2048
	// MaxApprovalCallIDBytes bounds a call id, as admission does.
	MaxApprovalCallIDBytes = 256
	// maxIDBytes bounds run and parent call ids (runIDPattern,
	// plan.ParentPattern).
	maxIDBytes = 128
)

// Errors of the approval controller.
var (
	ErrApprovalNotFound  = errors.New("approval: no such request")
	ErrApprovalDecided   = errors.New("approval: already decided")
	ErrApprovalAuditFull = errors.New("approval: audit full")
	ErrApprovalBadLease  = errors.New("approval: lease must be 1s..24h")
	ErrApprovalMismatch  = errors.New("approval: the record approves another call")
	ErrNotApproved       = errors.New("approval: not approved")
	ErrAlreadyDispatched = errors.New("approval: already dispatched")
	ErrDispatchCancelled = errors.New("approval: the call was cancelled before dispatch")
	ErrDispatchExpired   = errors.New("approval: the lease ran out before dispatch")
	ErrNotDispatched     = errors.New("approval: not dispatched")
	ErrAlreadyCompleted  = errors.New("approval: already completed")
)

// Refusals of a malformed field, each inside an *ApprovalFieldError.
var (
	ErrApprovalFieldMissing   = errors.New("approval: field missing")
	ErrApprovalFieldTooLong   = errors.New("approval: field too long")
	ErrApprovalFieldMalformed = errors.New("approval: field malformed")
)

// ApprovalFieldError is the refusal of one field of a request (or of an
// outcome): Err is ErrApprovalFieldMissing, ErrApprovalFieldTooLong,
// ErrApprovalFieldMalformed or ErrApprovalBadLease.
type ApprovalFieldError struct {
	Field string // the field's JSON name
	Err   error
}

func (e *ApprovalFieldError) Error() string {
	return "approval: " + e.Field + ": " + strings.TrimPrefix(e.Err.Error(), "approval: ")
}

func (e *ApprovalFieldError) Unwrap() error { return e.Err }

// ApprovalBinding is what one approval approves: one call, by id, of one
// run under one Plan, to one capability with arguments of one digest. A
// record approves exactly its binding, and BeginDispatch commits only the
// call that presents it.
type ApprovalBinding struct {
	RunID           string `json:"run_id"`
	PlanSHA256      string `json:"plan_sha256"`
	ParentCallID    string `json:"parent_call_id,omitempty"` // programmatic calls only
	CallID          string `json:"call_id"`
	Capability      string `json:"capability"`
	ArgumentsSHA256 string `json:"arguments_sha256"`
}

// validate checks every field: present (the parent only on programmatic
// calls), within its bound, and well-formed. A call id must be the
// parent's (<parent>:program:<n>) when there is a parent, a direct one
// (capability-<n>) when there is none.
func (b ApprovalBinding) validate() error {
	digestLen := len(canonjson.DigestPrefix) + 64
	for _, f := range []struct {
		name, value string
		optional    bool
		max         int
		wellFormed  func(string) bool
	}{
		{"run_id", b.RunID, false, maxIDBytes, runIDPattern.MatchString},
		{"plan_sha256", b.PlanSHA256, false, digestLen, canonjson.IsDigest},
		{"parent_call_id", b.ParentCallID, true, maxIDBytes, plan.ParentPattern.MatchString},
		{"call_id", b.CallID, false, MaxApprovalCallIDBytes, b.isCallOfParent},
		{"capability", b.Capability, false, plan.MaxNameLen, plan.ValidName},
		{"arguments_sha256", b.ArgumentsSHA256, false, digestLen, canonjson.IsDigest},
	} {
		var err error
		switch {
		case f.value == "" && f.optional:
		case f.value == "":
			err = ErrApprovalFieldMissing
		case len(f.value) > f.max:
			err = ErrApprovalFieldTooLong
		case !f.wellFormed(f.value):
			err = ErrApprovalFieldMalformed
		}
		if err != nil {
			return &ApprovalFieldError{Field: f.name, Err: err}
		}
	}
	return nil
}

func (b ApprovalBinding) isCallOfParent(callID string) bool {
	prefix := "capability-"
	if b.ParentCallID != "" {
		prefix = b.ParentCallID + ":program:"
	}
	n, ok := strings.CutPrefix(callID, prefix)
	_, valid := parseSeq(n)
	return ok && valid
}

// ApprovalRecord is the audit record of one approval request. It has two
// parts, and each moves one way only.
//
// State is the decision. It leaves waiting exactly once and never changes
// again, whatever happens to the call afterwards:
//
//	waiting -> approved | rejected | expired | cancelled
//
// Dispatch is what became of an approved call. It stays none for every
// other decision; for an approved one it moves at BeginDispatch, the
// dispatch commit point, and at Complete:
//
//	none -> dispatched -> completed | ambiguous
//	none -> cancelled | expired      (the call's context ended, or the lease
//	                                  ran out, before dispatch: nothing ran)
//
// A decision is final once made. Of the dispatch states completed,
// ambiguous, cancelled and expired are final, and so is none for every record that is
// not approved. Only dispatched and what follows it mean that the handler
// ran (or runs); ambiguous means it ran and its completion could not be
// audited.
//
// A record binds what it approves (ApprovalBinding): the run, the Plan
// digest, the parent call id, the call id, the capability and the
// arguments digest; never the arguments or the preview.
type ApprovalRecord struct {
	ID string `json:"id"`
	ApprovalBinding
	State     ApprovalState `json:"state"`
	Dispatch  DispatchState `json:"dispatch"`
	Lease     time.Duration `json:"lease_ns"`
	CreatedAt time.Time     `json:"created_at"`
	ExpiresAt time.Time     `json:"expires_at"`
	DecidedAt time.Time     `json:"decided_at,omitzero"`
	Outcome   string        `json:"outcome,omitempty"` // the call's outcome, once completed (or ambiguous)
}

// PendingRequest is what an approver is shown: the record plus a bounded
// preview of the arguments that lives only while the request waits.
type PendingRequest struct {
	ApprovalRecord
	Preview string `json:"preview"`
}

// ApprovalEvent tells subscribers that a record changed.
type ApprovalEvent struct {
	Record ApprovalRecord `json:"record"`
}

// ApprovalRequest asks for a decision on one call: the binding, a preview
// of the arguments for the approver, and the lease.
type ApprovalRequest struct {
	ApprovalBinding
	Preview string
	Lease   time.Duration
}

// ApprovalOptions configure a controller.
type ApprovalOptions struct {
	MaxRecords int              // default DefaultMaxApprovalRecords
	Now        func() time.Time // default time.Now
	// Audit, when set, durably records each completion. If it fails after
	// the handler ran, the call's receipt is ambiguous.
	Audit func(ApprovalRecord) error
}

type approvalEntry struct {
	rec     ApprovalRecord
	preview string
	decided chan struct{} // closed when the record leaves waiting
}

// Approvals is the approval controller: one per supervisor or per run.
type Approvals struct {
	mu      sync.Mutex
	opts    ApprovalOptions
	entries map[string]*approvalEntry
	order   []string
	subs    map[int]chan ApprovalEvent
	nextSub int
}

// NewApprovals returns a controller.
func NewApprovals(opts ApprovalOptions) *Approvals {
	if opts.MaxRecords <= 0 {
		opts.MaxRecords = DefaultMaxApprovalRecords
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Approvals{opts: opts, entries: make(map[string]*approvalEntry), subs: make(map[int]chan ApprovalEvent)}
}

// Request opens a waiting record. A malformed field is refused with an
// *ApprovalFieldError. When the audit is full it refuses rather than
// dropping old records.
func (a *Approvals) Request(req ApprovalRequest) (ApprovalRecord, error) {
	if err := req.validate(); err != nil {
		return ApprovalRecord{}, err
	}
	if req.Lease < MinLease || req.Lease > MaxLease {
		return ApprovalRecord{}, &ApprovalFieldError{Field: "lease", Err: ErrApprovalBadLease}
	}
	var idBytes [12]byte
	if _, err := rand.Read(idBytes[:]); err != nil {
		return ApprovalRecord{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.entries) >= a.opts.MaxRecords {
		return ApprovalRecord{}, ErrApprovalAuditFull
	}
	now := a.opts.Now()
	e := &approvalEntry{
		rec: ApprovalRecord{
			ID: "apr_" + hex.EncodeToString(idBytes[:]), ApprovalBinding: req.ApprovalBinding,
			State: ApprovalWaiting, Dispatch: DispatchNone, Lease: req.Lease, CreatedAt: now, ExpiresAt: now.Add(req.Lease),
		},
		preview: boundPreview(req.Preview),
		decided: make(chan struct{}),
	}
	a.entries[e.rec.ID] = e
	a.order = append(a.order, e.rec.ID)
	a.publishLocked(e)
	return e.rec, nil
}

func boundPreview(s string) string {
	if len(s) <= MaxPreviewBytes {
		return s
	}
	cut := MaxPreviewBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Wait blocks until the record is decided, its lease runs out (expired) or
// ctx ends (cancelled), and returns the state it ended in. When a decision
// and the end of ctx are both ready it may return either: approved is no
// licence to run, BeginDispatch is.
func (a *Approvals) Wait(ctx context.Context, id string) (ApprovalState, error) {
	a.mu.Lock()
	e, ok := a.entries[id]
	if !ok {
		a.mu.Unlock()
		return "", ErrApprovalNotFound
	}
	wait := e.rec.ExpiresAt.Sub(a.opts.Now())
	a.mu.Unlock()
	timer := time.NewTimer(max(wait, 0))
	defer timer.Stop()
	select {
	case <-e.decided:
	case <-timer.C:
		a.decide(id, ApprovalExpired)
	case <-ctx.Done():
		a.decide(id, ApprovalCancelled)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return e.rec.State, nil
}

// Approve, Reject and Cancel decide a waiting record; a decided one they
// leave as it is (ErrApprovalDecided). Cancel is what the end of the
// call's context does inside Wait. An approved record stays approved: a
// call whose context ends after its approval is stopped at BeginDispatch
// (dispatch cancelled).
func (a *Approvals) Approve(id string) error { return a.decide(id, ApprovalApproved) }
func (a *Approvals) Reject(id string) error  { return a.decide(id, ApprovalRejected) }
func (a *Approvals) Cancel(id string) error  { return a.decide(id, ApprovalCancelled) }

// decide moves a waiting record to its decision; it is the only writer of
// a record's State.
func (a *Approvals) decide(id string, to ApprovalState) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.entries[id]
	if !ok {
		return ErrApprovalNotFound
	}
	if e.rec.State != ApprovalWaiting {
		return ErrApprovalDecided
	}
	if to == ApprovalApproved && !a.opts.Now().Before(e.rec.ExpiresAt) {
		a.setStateLocked(e, ApprovalExpired)
		return ErrApprovalDecided
	}
	a.setStateLocked(e, to)
	return nil
}

func (a *Approvals) setStateLocked(e *approvalEntry, to ApprovalState) {
	e.rec.State = to
	e.rec.DecidedAt = a.opts.Now()
	e.preview = "" // the preview lives only while the request waits
	close(e.decided)
	a.publishLocked(e)
}

// BeginDispatch is the dispatch commit point of an approved call, and the
// single linearisation point between its decision, the end of ctx (the
// call's own context), the end of its lease and its handler. The caller
// presents the call's binding; a record bound to anything else is left as
// it is (ErrApprovalMismatch). Under the controller's lock it moves the
// record's dispatch from none to exactly one of:
//
//   - cancelled, when ctx has ended: ErrDispatchCancelled, nothing runs;
//   - expired, when the lease has run out: ErrDispatchExpired, nothing runs;
//   - dispatched: nil, and the handler runs, with ctx not yet ended.
//
// A cancellation that comes later is the handler's to see. The decision
// stays approved in every case. A repeated BeginDispatch changes nothing:
// it fails as the first one ended (or ErrAlreadyDispatched).
func (a *Approvals) BeginDispatch(ctx context.Context, id string, call ApprovalBinding) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.entries[id]
	switch {
	case !ok:
		return ErrApprovalNotFound
	case e.rec.ApprovalBinding != call:
		return ErrApprovalMismatch
	case e.rec.State != ApprovalApproved:
		return ErrNotApproved
	case e.rec.Dispatch == DispatchCancelled:
		return ErrDispatchCancelled
	case e.rec.Dispatch == DispatchExpired:
		return ErrDispatchExpired
	case e.rec.Dispatch != DispatchNone:
		return ErrAlreadyDispatched
	}
	switch {
	case ctx.Err() != nil:
		a.setDispatchLocked(e, DispatchCancelled)
		return ErrDispatchCancelled
	case !a.opts.Now().Before(e.rec.ExpiresAt):
		a.setDispatchLocked(e, DispatchExpired)
		return ErrDispatchExpired
	}
	a.setDispatchLocked(e, DispatchStarted)
	return nil
}

// Complete records the outcome (ok, error or ambiguous) of a dispatched
// call, exactly once: its dispatch becomes completed. The audit hook runs
// inside; its failure is returned and the dispatch becomes ambiguous (the
// handler ran, the audit does not say so), which is final too.
func (a *Approvals) Complete(id, outcome string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.entries[id]
	switch {
	case !ok:
		return ErrApprovalNotFound
	case outcome != StatusOK && outcome != StatusError && outcome != StatusAmbiguous:
		return &ApprovalFieldError{Field: "outcome", Err: ErrApprovalFieldMalformed}
	case e.rec.Dispatch == DispatchCompleted || e.rec.Dispatch == DispatchAmbiguous:
		return ErrAlreadyCompleted
	case e.rec.Dispatch != DispatchStarted:
		return ErrNotDispatched
	}
	e.rec.Outcome = outcome
	if a.opts.Audit != nil {
		done := e.rec
		done.Dispatch = DispatchCompleted
		if err := a.opts.Audit(done); err != nil {
			a.setDispatchLocked(e, DispatchAmbiguous)
			return err
		}
	}
	a.setDispatchLocked(e, DispatchCompleted)
	return nil
}

// setDispatchLocked is the only writer of a record's Dispatch; its callers
// check that the move is one of the state machine's.
func (a *Approvals) setDispatchLocked(e *approvalEntry, to DispatchState) {
	e.rec.Dispatch = to
	a.publishLocked(e)
}

// Get returns one record.
func (a *Approvals) Get(id string) (ApprovalRecord, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.entries[id]
	if !ok {
		return ApprovalRecord{}, false
	}
	return e.rec, true
}

// Pending lists waiting requests, oldest first, with their previews.
func (a *Approvals) Pending() []PendingRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []PendingRequest
	for _, id := range a.order {
		if e := a.entries[id]; e.rec.State == ApprovalWaiting {
			out = append(out, PendingRequest{ApprovalRecord: e.rec, Preview: e.preview})
		}
	}
	return out
}

// Records returns the whole audit, oldest first.
func (a *Approvals) Records() []ApprovalRecord {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]ApprovalRecord, 0, len(a.order))
	for _, id := range a.order {
		out = append(out, a.entries[id].rec)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out
}

// Subscribe returns a channel of changes and a function that ends the
// subscription. A subscriber that does not keep up misses events (the
// channel is buffered) rather than blocking decisions; Pending and Records
// always tell the current state.
func (a *Approvals) Subscribe() (<-chan ApprovalEvent, func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	id := a.nextSub
	a.nextSub++
	ch := make(chan ApprovalEvent, 64)
	a.subs[id] = ch
	return ch, func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if c, ok := a.subs[id]; ok {
			delete(a.subs, id)
			close(c)
		}
	}
}

func (a *Approvals) publishLocked(e *approvalEntry) {
	for _, ch := range a.subs {
		select {
		case ch <- ApprovalEvent{Record: e.rec}:
		default:
		}
	}
}
