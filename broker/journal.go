package broker

import (
	"context"
	"encoding/json"
	"time"

	"github.com/apysup/apysup/plan"
)

// CallJournal is a run's durable memory of its calls (the supervisor's
// journal, for a run under an idempotency key). With one, the Broker
// records each boundary before the step it guards, and a call id that
// meets its record from an earlier attempt of the same run is answered
// from it: never dispatched twice.
//
//   - Intent, once the request digest is known (after the input schema),
//     before the grant, the approval and the dispatch;
//   - AwaitApproval and Decide around a person's decision, so that a
//     decision is never asked twice;
//   - BeginDispatch before the approval's own commit point and the handler,
//     with the call's sealed EffectBinding (what a later attempt presents
//     to a Provider to reconcile the call);
//   - Complete with the response, the receipt and a Provider's decision
//     projection, before the response returns; a call whose outcome is
//     unknown (dispatch_outcome_unknown) is not completed, so that a
//     later attempt can still reconcile it.
//
// An error from Intent, AwaitApproval, Decide or BeginDispatch ends the
// call before dispatch (journal_unavailable); an error from Complete,
// after the handler ran, leaves the call unknown in the journal and is
// otherwise not the guest's concern: the response it gets is the truth.
type CallJournal interface {
	Intent(ctx context.Context, callID, requestSHA256 string) (JournaledCall, error)
	AwaitApproval(ctx context.Context, callID, approvalID string) error
	Decide(ctx context.Context, callID, approvalID string, state ApprovalState, notAfter time.Time) error
	BeginDispatch(ctx context.Context, callID string, binding EffectBinding) error
	Complete(ctx context.Context, callID string, c JournalCompletion) error
}

// What a journal knows of a call id.
const (
	JournalNew       = "new"       // no earlier attempt recorded it
	JournalPending   = "pending"   // recorded, never dispatched (maybe with a decision)
	JournalCompleted = "completed" // its outcome is recorded: replayed, not dispatched
	JournalUnknown   = "unknown"   // its dispatch began and no outcome was recorded
)

// JournaledCall is a call's record from an earlier attempt.
type JournaledCall struct {
	State string
	// A recorded approval decision (pending calls): the call is not asked
	// again; an approval counts only until NotAfter, its lease.
	ApprovalID    string
	ApprovalState ApprovalState
	NotAfter      time.Time
	// A completed call's receipt and, for outcome ok, its result.
	Receipt Receipt
	Result  json.RawMessage
	// A Provider's decision projection of a completed call, if any.
	Projection *DecisionProjection
	// The binding an unknown call was dispatched with.
	Binding *EffectBinding
}

// JournalCompletion is what Complete records.
type JournalCompletion struct {
	Outcome   string // a receipt outcome, or "refused" (grant_denied, journal refusals: no receipt)
	ErrorCode string
	Response  []byte // the response as the guest receives it
	Receipt   json.RawMessage
	ReceiptID string
	// Projection is a Provider's decision projection (strict and
	// no_blind_retry calls to a Provider): the receipt's
	// provider_receipt_sha256 is its ReceiptSHA256.
	Projection *DecisionProjection
}

// CodeJournalUnavailable: the run's journal could not record a boundary;
// the call did not reach its handler.
const CodeJournalUnavailable = "journal_unavailable"

// journalIntent records the call's intent. It returns the earlier record
// (State JournalNew if none) or a refusal code.
func (b *Broker) journalIntent(ctx context.Context, rc *receiptDraft) (JournaledCall, string) {
	if b.cfg.Journal == nil {
		return JournaledCall{State: JournalNew}, ""
	}
	jc, err := b.cfg.Journal.Intent(ctx, rc.call.callID, rc.requestSHA256)
	if err != nil {
		if code := plan.CodeOf(err); code == CodeCallIdentityMismatch {
			return jc, code
		}
		return jc, CodeJournalUnavailable
	}
	return jc, ""
}

// replay answers a call completed by an earlier attempt with its recorded
// outcome and result, in a new receipt of this run that says so.
func (b *Broker) replay(rc *receiptDraft, jc JournaledCall) *Response {
	rc.approvalID, rc.replayed = jc.Receipt.ApprovalRequestID, true
	rc.replayedReceipt = jc.Receipt.ProviderReceiptSHA256
	return b.finishWith(rc, jc.Receipt.Outcome, jc.Receipt.ErrorCode, jc.Result, jc.Receipt.ResponseSHA256)
}

// recordedDecision turns an earlier attempt's approval decision into this
// attempt's: "" to go on to dispatch, or the refusal code.
func recordedDecision(jc JournaledCall, now time.Time) string {
	if jc.ApprovalState == ApprovalApproved && now.After(jc.NotAfter) {
		return CodeApprovalExpired
	}
	return decisionCode(jc.ApprovalState)
}

// journalComplete records the call's end; a failure leaves the call
// unknown in the journal, which is what the journal can then say.
// leftAbsent says whether a call that ended with code before its dispatch
// stays absent in the journal (SPEC section 10): its context ended (the
// caller gave it up, or the run is ending, SIGTERM or a server's
// shutdown), which decides nothing about the call, so a later attempt of
// the run makes it as usual. Recorded as completed, every later attempt
// would replay the cancellation, and the run could never complete.
func leftAbsent(code string) bool {
	return code == CodeApprovalCancelled || code == CodeCallCancelled
}

func (b *Broker) journalComplete(rc *receiptDraft, c JournalCompletion) {
	if !rc.journaled {
		return
	}
	// Not the call's context: the outcome is recorded even when the run is
	// ending.
	_ = b.cfg.Journal.Complete(context.Background(), rc.call.callID, c)
}
