package broker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sort"
	"sync"
	"time"
	"unicode/utf8"
)

// ApprovalState is the state of one approval record. It leaves waiting
// once, and a decided record never changes state again.
type ApprovalState string

const (
	ApprovalWaiting   ApprovalState = "waiting"
	ApprovalApproved  ApprovalState = "approved"
	ApprovalRejected  ApprovalState = "rejected"
	ApprovalExpired   ApprovalState = "expired"
	ApprovalCancelled ApprovalState = "cancelled"
)

// Lease bounds (SPEC.md section 5).
const (
	MinLease = time.Second
	MaxLease = 24 * time.Hour
	// DefaultMaxApprovalRecords bounds the audit.
	DefaultMaxApprovalRecords = 1024
	// MaxPreviewBytes bounds the human-readable preview shown to approvers.
	MaxPreviewBytes = 2048
)

// Errors of the approval controller.
var (
	ErrApprovalNotFound  = errors.New("approval: no such request")
	ErrApprovalDecided   = errors.New("approval: already decided")
	ErrApprovalAuditFull = errors.New("approval: audit full")
	ErrApprovalBadLease  = errors.New("approval: lease must be 1s..24h")
	ErrNotApproved       = errors.New("approval: not approved")
	ErrAlreadyDispatched = errors.New("approval: already dispatched")
	ErrNotDispatched     = errors.New("approval: not dispatched")
	ErrAlreadyCompleted  = errors.New("approval: already completed")
)

// ApprovalRecord is the audit record of one request. It holds the
// arguments digest only, never the arguments or the preview.
type ApprovalRecord struct {
	ID              string        `json:"id"`
	RunID           string        `json:"run_id"`
	CallID          string        `json:"call_id"`
	Capability      string        `json:"capability"`
	ArgumentsSHA256 string        `json:"arguments_sha256"`
	State           ApprovalState `json:"state"`
	Lease           time.Duration `json:"lease_ns"`
	CreatedAt       time.Time     `json:"created_at"`
	ExpiresAt       time.Time     `json:"expires_at"`
	DecidedAt       time.Time     `json:"decided_at,omitzero"`
	Dispatched      bool          `json:"dispatched"`
	Completed       bool          `json:"completed"`
	Outcome         string        `json:"outcome,omitempty"`
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

// ApprovalRequest asks for a decision on one call.
type ApprovalRequest struct {
	RunID           string
	CallID          string
	Capability      string
	ArgumentsSHA256 string
	Preview         string
	Lease           time.Duration
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

// Request opens a waiting record. When the audit is full it refuses rather
// than dropping old records.
func (a *Approvals) Request(req ApprovalRequest) (ApprovalRecord, error) {
	if req.Lease < MinLease || req.Lease > MaxLease {
		return ApprovalRecord{}, ErrApprovalBadLease
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
			ID: "apr_" + hex.EncodeToString(idBytes[:]), RunID: req.RunID, CallID: req.CallID,
			Capability: req.Capability, ArgumentsSHA256: req.ArgumentsSHA256, State: ApprovalWaiting,
			Lease: req.Lease, CreatedAt: now, ExpiresAt: now.Add(req.Lease),
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
// ctx ends (cancelled), and returns the state it ended in.
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

// Approve, Reject and Cancel decide a waiting record.
func (a *Approvals) Approve(id string) error { return a.decide(id, ApprovalApproved) }
func (a *Approvals) Reject(id string) error  { return a.decide(id, ApprovalRejected) }

// Cancel decides a waiting record as cancelled, or withdraws an approval
// not yet dispatched. After BeginDispatch it fails: the handler runs.
func (a *Approvals) Cancel(id string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.entries[id]
	if !ok {
		return ErrApprovalNotFound
	}
	switch {
	case e.rec.Dispatched:
		return ErrAlreadyDispatched
	case e.rec.State == ApprovalWaiting:
		a.setStateLocked(e, ApprovalCancelled)
		return nil
	case e.rec.State == ApprovalApproved:
		e.rec.State = ApprovalCancelled
		a.publishLocked(e)
		return nil
	}
	return ErrApprovalDecided
}

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

// BeginDispatch is the single linearisation point between cancellation or
// expiry and the handler: it succeeds only for an approved, unexpired,
// undispatched record, and after it the handler runs.
func (a *Approvals) BeginDispatch(id string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, err := a.approvedLocked(id)
	if err != nil {
		return err
	}
	if !a.opts.Now().Before(e.rec.ExpiresAt) {
		e.rec.State = ApprovalExpired
		a.publishLocked(e)
		return ErrNotApproved
	}
	e.rec.Dispatched = true
	a.publishLocked(e)
	return nil
}

// AbortApproved withdraws an approved record before BeginDispatch (for
// example when the run ends between approval and dispatch).
func (a *Approvals) AbortApproved(id string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, err := a.approvedLocked(id)
	if err != nil {
		return err
	}
	e.rec.State = ApprovalCancelled
	a.publishLocked(e)
	return nil
}

// approvedLocked returns the record of id when it is approved and not yet
// dispatched, the one state in which it may be dispatched or withdrawn.
func (a *Approvals) approvedLocked(id string) (*approvalEntry, error) {
	e, ok := a.entries[id]
	switch {
	case !ok:
		return nil, ErrApprovalNotFound
	case e.rec.Dispatched:
		return nil, ErrAlreadyDispatched
	case e.rec.State != ApprovalApproved:
		return nil, ErrNotApproved
	}
	return e, nil
}

// Complete records the outcome of a dispatched call, exactly once. The
// audit hook runs inside; its failure is returned (and the record keeps
// Completed false so the failure stays visible).
func (a *Approvals) Complete(id, outcome string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.entries[id]
	switch {
	case !ok:
		return ErrApprovalNotFound
	case !e.rec.Dispatched:
		return ErrNotDispatched
	case e.rec.Completed || e.rec.Outcome != "":
		return ErrAlreadyCompleted
	}
	e.rec.Outcome = outcome
	if a.opts.Audit != nil {
		if err := a.opts.Audit(e.rec); err != nil {
			a.publishLocked(e)
			return err
		}
	}
	e.rec.Completed = true
	a.publishLocked(e)
	return nil
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
