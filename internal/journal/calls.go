package journal

import (
	"context"
	"database/sql"
	"errors"

	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/internal/pattern"
)

// Log entry kinds, one per boundary.
const (
	KindRunBegun        = "run_begun"
	KindCallIntent      = "call_intent"
	KindApprovalAwaited = "approval_awaited"
	KindApprovalDecided = "approval_decided"
	KindDispatchBegun   = "dispatch_begun"
	KindCallCompleted   = "call_completed"
	KindRunEnded        = "run_ended"
	KindCompacted       = "compacted"
)

// Run states.
const (
	RunRunning    = "running"    // begun, not ended (or its process died)
	RunIncomplete = "incomplete" // ended without a final outcome (killed, refused, setup_failed): retried by running again
	RunCompleted  = "completed"  // ended with a final outcome; running again returns it
	RunCompacted  = "compacted"  // completed, and its payloads dropped (a tombstone)
)

// Call states.
const (
	CallIntent      = "intent"      // admitted up to the journal; provably not dispatched
	CallAwaiting    = "awaiting"    // waiting for a person's decision; not dispatched
	CallDecided     = "decided"     // the decision is recorded; not dispatched
	CallDispatching = "dispatching" // dispatch began; no outcome recorded: unknown
	CallCompleted   = "completed"   // the outcome and receipt are recorded
)

// Answer is what the journal can say about a call id after a crash.
type Answer string

// Answers.
const (
	Completed Answer = "completed" // with its recorded response and receipt (or, compacted, its outcome code)
	Unknown   Answer = "unknown"   // dispatch began, no outcome: it may have acted
	Absent    Answer = "absent"    // never dispatched
)

// Fingerprint is what makes a second run under a key "the same run": the
// Plan and a digest of the script, its arguments and the run's choices.
type Fingerprint struct {
	PlanSHA256    string
	RequestSHA256 string
}

// Run is a run's journal record.
type Run struct {
	Key         string
	Fingerprint Fingerprint
	State       string
	Attempts    int
	Status      string // the RunResult's status, once ended
	Result      []byte // the RunResult, once completed (nil once compacted)
	Owner       string
}

// Call is a call's journal record.
type Call struct {
	RunKey         string
	CallID         string
	RequestSHA256  string
	State          string
	ApprovalID     string
	ApprovalState  string
	NotAfter       int64  // unix milliseconds: an approval counts until then (its lease)
	Outcome        string // the receipt's outcome, or "refused" for a call refused without a receipt
	ErrorCode      string
	Response       []byte // the Broker's response as returned to the guest (nil once compacted)
	ResponseSHA256 string
	Receipt        []byte // the receipt (nil once compacted or for a refusal)
	ReceiptID      string
	Binding        []byte // the call's effect binding, from BeginDispatch (nil once compacted)
	Projection     []byte // a provider's decision projection (nil once compacted or without one)
}

// Answer is what the record says after a crash.
func (c *Call) Answer() Answer {
	switch c.State {
	case CallCompleted:
		return Completed
	case CallDispatching:
		return Unknown
	}
	return Absent
}

var (
	keyPattern    = pattern.New("A-Za-z0-9", "A-Za-z0-9._:-", 128)
	callIDPattern = pattern.New("A-Za-z0-9", "A-Za-z0-9._:-", 192)
)

func checkIDs(key, callID string) error {
	if !keyPattern.MatchString(key) {
		return fail(CodeInvalid, "an idempotency key is 1-128 characters of [A-Za-z0-9._:-], starting with a letter or digit", nil)
	}
	if callID != "" && !callIDPattern.MatchString(callID) {
		return fail(CodeInvalid, "malformed call id", nil)
	}
	return nil
}

// ValidKey reports whether key is a well-formed idempotency key.
func ValidKey(key string) bool { return keyPattern.MatchString(key) }

// BeginRun starts (or resumes) the run under key. A key never seen begins
// attempt 1. A key whose run completed with the same fingerprint returns
// that run (State RunCompleted, Result set) and begins nothing: the caller
// returns the recorded result without running anything. A key whose run
// did not complete begins the next attempt, unless its owner is still
// alive (CodeRunActive). Another fingerprint is CodeKeyConflict; a
// compacted run, CodeKeyCompacted.
func (j *Journal) BeginRun(ctx context.Context, key string, fp Fingerprint, owner string) (*Run, error) {
	if err := checkIDs(key, ""); err != nil {
		return nil, err
	}
	if !canonjson.IsDigest(fp.PlanSHA256) || !canonjson.IsDigest(fp.RequestSHA256) {
		return nil, fail(CodeInvalid, "a run's fingerprint is two digests", nil)
	}
	prior, err := j.run(ctx, key)
	if err != nil {
		return nil, err
	}
	if prior != nil {
		if prior.Fingerprint != fp {
			return nil, fail(CodeKeyConflict, "the idempotency key was used with another script, arguments or Plan", nil)
		}
		switch prior.State {
		case RunCompleted:
			return prior, nil
		case RunCompacted:
			return nil, fail(CodeKeyCompacted, "the run under this key completed ("+prior.Status+") and was compacted; its result is no longer kept", nil)
		case RunRunning:
			if OwnerAlive(prior.Owner) {
				return nil, fail(CodeRunActive, "a live process is running under this idempotency key", nil)
			}
		}
	}
	attempt := 1
	if prior != nil {
		attempt = prior.Attempts + 1
	}
	body := map[string]any{"plan_sha256": fp.PlanSHA256, "request_sha256": fp.RequestSHA256, "attempt": attempt}
	err = j.commit(ctx, entry{kind: KindRunBegun, runKey: key, body: body}, func(tx *sql.Tx, seq int64) error {
		// Another process sharing the directory may have begun (or ended)
		// a run under this key since prior was read: the write lock is
		// held from here, so look again.
		var state string
		var attempts int
		err := tx.QueryRow(`SELECT state, attempts FROM runs WHERE key = ?`, key).Scan(&state, &attempts)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return dbErr(err)
		}
		if found := err == nil; found != (prior != nil) || found && (state != prior.State || attempts != prior.Attempts) {
			return fail(CodeRunActive, "another process began a run under this idempotency key", nil)
		}
		_, err = tx.Exec(`INSERT INTO runs (key, plan_sha256, request_sha256, state, attempts, owner, first_seq, begun_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET state = excluded.state, attempts = excluded.attempts, owner = excluded.owner,
			status = '', begun_seq = excluded.begun_seq, ended_seq = 0, ended_at = 0`,
			key, fp.PlanSHA256, fp.RequestSHA256, RunRunning, attempt, owner, seq, seq)
		return dbErr(err)
	})
	if err != nil {
		return nil, err
	}
	return &Run{Key: key, Fingerprint: fp, State: RunRunning, Attempts: attempt, Owner: owner}, nil
}

// EndRun records how the run under key ended. final says whether its
// status is an outcome (ok, error, timeout, memory_limit) that running
// again must return, or an ending that running again retries (killed,
// refused, setup_failed). result is the RunResult, kept only when final.
func (j *Journal) EndRun(ctx context.Context, key, status string, final bool, result []byte) error {
	if err := checkIDs(key, ""); err != nil {
		return err
	}
	state, digest := RunIncomplete, ""
	if final {
		state, digest = RunCompleted, canonjson.PlainDigest(result)
	} else {
		result = nil
	}
	body := map[string]any{"status": status, "final": final, "result_sha256": digest}
	return j.commit(ctx, entry{kind: KindRunEnded, runKey: key, body: body}, func(tx *sql.Tx, seq int64) error {
		res, err := tx.Exec(`UPDATE runs SET state = ?, status = ?, result = ?, result_sha256 = ?, ended_seq = ?, ended_at = ? WHERE key = ? AND state = ?`,
			state, status, result, digest, seq, j.opts.Now().UnixMilli(), key, RunRunning)
		return oneRow(res, err, "no running run under this key")
	})
}

// Intent records that call callID of the run under key was admitted with
// the request digest requestSHA256, before anything else happens to it,
// and returns its record. If the call is already in the journal (an
// earlier attempt), nothing is written and the earlier record is returned:
// the caller replays a completed call, answers an unknown one with
// CodeDispatchUnknown, and carries on with a call that never reached
// dispatch (keeping a recorded approval decision). Another request under
// the same call id is CodeCallIdentityMismatch.
func (j *Journal) Intent(ctx context.Context, key, callID, requestSHA256 string) (call *Call, created bool, err error) {
	if err := checkIDs(key, callID); err != nil {
		return nil, false, err
	}
	if !canonjson.IsDigest(requestSHA256) {
		return nil, false, fail(CodeInvalid, "a request digest is sha256:<hex>", nil)
	}
	prior, err := j.Call(ctx, key, callID)
	if err != nil {
		return nil, false, err
	}
	if prior != nil {
		if prior.RequestSHA256 != requestSHA256 {
			return nil, false, fail(CodeCallIdentityMismatch, "the call id was recorded with another request", nil)
		}
		return prior, false, nil
	}
	err = j.commit(ctx, entry{kind: KindCallIntent, runKey: key, callID: callID, body: map[string]any{"request_sha256": requestSHA256}},
		func(tx *sql.Tx, seq int64) error {
			var state string
			if err := tx.QueryRow(`SELECT state FROM runs WHERE key = ?`, key).Scan(&state); err != nil || state != RunRunning {
				return fail(CodeInvalid, "no running run under this key", err)
			}
			_, err := tx.Exec(`INSERT INTO calls (run_key, call_id, request_sha256, state) VALUES (?, ?, ?, ?)`, key, callID, requestSHA256, CallIntent)
			return dbErr(err)
		})
	if err != nil {
		return nil, false, err
	}
	return &Call{RunKey: key, CallID: callID, RequestSHA256: requestSHA256, State: CallIntent}, true, nil
}

// AwaitApproval records that the call waits for a person's decision on
// approval request approvalID.
func (j *Journal) AwaitApproval(ctx context.Context, key, callID, approvalID string) error {
	return j.transition(ctx, KindApprovalAwaited, key, callID, map[string]any{"approval_id": approvalID},
		`UPDATE calls SET state = ?, approval_id = ? WHERE run_key = ? AND call_id = ? AND state IN (?, ?)`,
		CallAwaiting, approvalID, key, callID, CallIntent, CallAwaiting)
}

// Decide records the decision on the call's approval request (approved,
// rejected, expired, cancelled) and, for an approval, the end of its lease
// (unix milliseconds). A recorded decision is never asked again.
func (j *Journal) Decide(ctx context.Context, key, callID, approvalID, decision string, notAfter int64) error {
	return j.transition(ctx, KindApprovalDecided, key, callID, map[string]any{"approval_id": approvalID, "state": decision, "not_after": notAfter},
		`UPDATE calls SET state = ?, approval_id = ?, approval_state = ?, approval_not_after = ? WHERE run_key = ? AND call_id = ? AND state IN (?, ?)`,
		CallDecided, approvalID, decision, notAfter, key, callID, CallIntent, CallAwaiting)
}

// BeginDispatch records that the handler is about to run, with the call's
// effect binding (canonical JSON, or nil): what a later attempt presents
// to a provider to reconcile the call. Only after it returns nil may the
// handler be called; from then on, until Complete, the call's answer is
// Unknown.
func (j *Journal) BeginDispatch(ctx context.Context, key, callID string, binding []byte) error {
	return j.transition(ctx, KindDispatchBegun, key, callID, map[string]any{"binding_sha256": payloadDigest(binding)},
		`UPDATE calls SET state = ?, binding = ? WHERE run_key = ? AND call_id = ? AND state IN (?, ?)`,
		CallDispatching, binding, key, callID, CallIntent, CallDecided)
}

// payloadDigest is the log's digest of an optional payload ("" for none).
func payloadDigest(b []byte) string {
	if b == nil {
		return ""
	}
	return canonjson.PlainDigest(b)
}

// Completion is a call's recorded end.
type Completion struct {
	Outcome   string // the receipt's outcome (ok, error, denied, ambiguous), or "refused"
	ErrorCode string
	Response  []byte // the Broker's response, as the guest received it
	Receipt   []byte // the receipt, nil for a refusal without one
	ReceiptID string
	// Projection is a provider's decision projection (canonical JSON), nil
	// without one; the receipt's provider_receipt_sha256 references it.
	Projection []byte
}

// Complete records the call's outcome, response and receipt. A call is
// completed from any earlier state: refused before dispatch, denied, or
// after its handler ran.
func (j *Journal) Complete(ctx context.Context, key, callID string, c Completion) error {
	respDigest := canonjson.PlainDigest(c.Response)
	body := map[string]any{"outcome": c.Outcome, "error_code": c.ErrorCode, "receipt_id": c.ReceiptID, "response_sha256": respDigest,
		"projection_sha256": payloadDigest(c.Projection)}
	return j.transition(ctx, KindCallCompleted, key, callID, body,
		`UPDATE calls SET state = ?, outcome = ?, error_code = ?, response = ?, response_sha256 = ?, receipt = ?, receipt_id = ?, projection = ?
		WHERE run_key = ? AND call_id = ? AND state != ?`,
		CallCompleted, c.Outcome, c.ErrorCode, c.Response, respDigest, c.Receipt, c.ReceiptID, c.Projection, key, callID, CallCompleted)
}

func (j *Journal) transition(ctx context.Context, kind, key, callID string, body map[string]any, update string, args ...any) error {
	if err := checkIDs(key, callID); err != nil {
		return err
	}
	return j.commit(ctx, entry{kind: kind, runKey: key, callID: callID, body: body}, func(tx *sql.Tx, seq int64) error {
		res, err := tx.Exec(update, args...)
		return oneRow(res, err, "the call is not in a state that allows "+kind)
	})
}

// Call returns the record of callID in the run under key, or nil.
func (j *Journal) Call(ctx context.Context, key, callID string) (*Call, error) {
	c := &Call{RunKey: key, CallID: callID}
	err := j.db.QueryRowContext(ctx, `SELECT request_sha256, state, approval_id, approval_state, approval_not_after, outcome, error_code, response, response_sha256, receipt, receipt_id, binding, projection
		FROM calls WHERE run_key = ? AND call_id = ?`, key, callID).Scan(
		&c.RequestSHA256, &c.State, &c.ApprovalID, &c.ApprovalState, &c.NotAfter, &c.Outcome, &c.ErrorCode, &c.Response, &c.ResponseSHA256, &c.Receipt, &c.ReceiptID, &c.Binding, &c.Projection)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fail(CodeUnavailable, "cannot read the journal", err)
	}
	return c, nil
}

// Calls returns every call of the run under key, in the order they were
// first recorded.
func (j *Journal) Calls(ctx context.Context, key string) ([]Call, error) {
	rows, err := j.db.QueryContext(ctx, `SELECT c.call_id, c.request_sha256, c.state, c.approval_id, c.approval_state, c.outcome, c.error_code, c.response_sha256, c.receipt_id
		FROM calls c JOIN log l ON l.run_key = c.run_key AND l.call_id = c.call_id AND l.kind = ?
		WHERE c.run_key = ? ORDER BY l.seq`, KindCallIntent, key)
	if err != nil {
		return nil, fail(CodeUnavailable, "cannot read the journal", err)
	}
	defer rows.Close()
	var out []Call
	for rows.Next() {
		c := Call{RunKey: key}
		if err := rows.Scan(&c.CallID, &c.RequestSHA256, &c.State, &c.ApprovalID, &c.ApprovalState, &c.Outcome, &c.ErrorCode, &c.ResponseSHA256, &c.ReceiptID); err != nil {
			return nil, fail(CodeUnavailable, "cannot read the journal", err)
		}
		out = append(out, c)
	}
	return out, dbErr(rows.Err())
}

// Runs returns every run, in the order they first began.
func (j *Journal) Runs(ctx context.Context) ([]Run, error) {
	rows, err := j.db.QueryContext(ctx, `SELECT key, plan_sha256, request_sha256, state, attempts, owner, status FROM runs ORDER BY first_seq`)
	if err != nil {
		return nil, fail(CodeUnavailable, "cannot read the journal", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		var r Run
		if err := rows.Scan(&r.Key, &r.Fingerprint.PlanSHA256, &r.Fingerprint.RequestSHA256, &r.State, &r.Attempts, &r.Owner, &r.Status); err != nil {
			return nil, fail(CodeUnavailable, "cannot read the journal", err)
		}
		out = append(out, r)
	}
	return out, dbErr(rows.Err())
}

func (j *Journal) run(ctx context.Context, key string) (*Run, error) {
	r := &Run{Key: key}
	err := j.db.QueryRowContext(ctx, `SELECT plan_sha256, request_sha256, state, attempts, owner, status, result FROM runs WHERE key = ?`, key).Scan(
		&r.Fingerprint.PlanSHA256, &r.Fingerprint.RequestSHA256, &r.State, &r.Attempts, &r.Owner, &r.Status, &r.Result)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fail(CodeUnavailable, "cannot read the journal", err)
	}
	return r, nil
}

// Run returns the record of the run under key, or nil.
func (j *Journal) Run(ctx context.Context, key string) (*Run, error) {
	if err := checkIDs(key, ""); err != nil {
		return nil, err
	}
	return j.run(ctx, key)
}

func dbErr(err error) error {
	if err == nil {
		return nil
	}
	var je *Error
	if errors.As(err, &je) {
		return err
	}
	return fail(CodeUnavailable, "cannot write the journal", err)
}

func oneRow(res sql.Result, err error, msg string) error {
	if err != nil {
		return dbErr(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fail(CodeInvalid, msg, err)
	}
	return nil
}
