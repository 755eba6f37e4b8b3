package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apysup/apysup/internal/callctx"
	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/plan"
)

// The Broker's side of provider effect acceptance (acceptance.go,
// docs/acceptance.md): the binding of every dispatched call, the strict and
// no_blind_retry dispatch paths, and the reconciliation of a call an
// earlier attempt left unknown.

// CodeAcceptanceUnsupported: a capability asks for strict acceptance and
// its handler is no Provider, or its profile misses a guarantee. Refused
// when the manifest is sealed (handlers.Checker) and when the Broker is
// built (New), never weakened.
const CodeAcceptanceUnsupported = "acceptance_unsupported"

// AcceptanceError is New's refusal of a strict capability whose handler
// cannot accept it.
type AcceptanceError struct {
	Capability string
	Missing    []Guarantee // every guarantee, when the handler is no Provider
}

func (e *AcceptanceError) Error() string {
	names := make([]string, len(e.Missing))
	for i, g := range e.Missing {
		names[i] = string(g)
	}
	return fmt.Sprintf("broker: capability %s requires strict acceptance; its handler does not declare %s", e.Capability, strings.Join(names, ", "))
}

// ErrorCode is the error's stable code (plan.CodeOf finds it).
func (e *AcceptanceError) ErrorCode() string { return CodeAcceptanceUnsupported }

// checkAcceptance is New's check of one capability against its handler's
// live profile.
func checkAcceptance(c *plan.Capability, h any) error {
	if c.Acceptance() != plan.AcceptanceStrict {
		return nil
	}
	p, ok := h.(Provider)
	if !ok {
		return &AcceptanceError{Capability: c.Name(), Missing: StrictGuarantees}
	}
	if missing := p.Profile().Missing(); len(missing) > 0 {
		return &AcceptanceError{Capability: c.Name(), Missing: missing}
	}
	return nil
}

// effectBinding seals the binding of a call about to be dispatched: every
// handler sees it (EffectBindingFrom), and a Provider checks it.
func (b *Broker) effectBinding(rc *receiptDraft, c *plan.Capability, h any) EffectBinding {
	eb := EffectBinding{
		RunID: b.cfg.RunID, PlanSHA256: b.cfg.Plan.Identity(), CallID: rc.call.callID,
		Capability: c.Name(), Handler: c.Handler(), PolicySHA256: b.policies[c.Name()],
		ApprovalRequestID: rc.approvalID, RequestSHA256: rc.requestSHA256, Acceptance: c.Acceptance(),
	}
	if p, ok := h.(Provider); ok {
		profile := p.Profile()
		eb.ProviderID, eb.ProviderEpoch = profile.ProviderID, profile.Epoch
	}
	return eb.Seal()
}

// sameCall reports whether a binding journaled by an earlier attempt is
// this call's: every field this attempt derives agrees (the provider's
// epoch may have moved since; the journaled one is what was presented).
func (b *Broker) sameCall(eb EffectBinding, rc *receiptDraft, c *plan.Capability) bool {
	return eb.Verify() && eb.RunID == b.cfg.RunID && eb.PlanSHA256 == b.cfg.Plan.Identity() &&
		eb.CallID == rc.call.callID && eb.Capability == c.Name() && eb.Handler == c.Handler() &&
		eb.PolicySHA256 == b.policies[c.Name()] && eb.RequestSHA256 == rc.requestSHA256 && eb.Acceptance == c.Acceptance()
}

// outcome is what one dispatch path ends in.
type outcome struct {
	result       json.RawMessage
	status, code string
}

// accept dispatches a call to a Provider (strict or no_blind_retry): one
// Accept; after an error (the response was lost), one Query; under strict,
// an authoritative absence allows exactly one more Accept of the same
// binding. Nothing else is ever resent.
func (b *Broker) accept(ctx context.Context, rc *receiptDraft, p Provider, c *plan.Capability, args json.RawMessage) outcome {
	res, err := callAccept(ctx, p, rc.binding, args)
	if err != nil {
		if errPanic(err) {
			return outcome{status: StatusAmbiguous, code: CodeHandlerPanicked}
		}
		return b.reconcile(ctx, rc, p, c, args)
	}
	return b.accepted(rc, c, res)
}

// reconcile resolves a call whose Accept outcome is unknown, now or in an
// earlier attempt, by reading the provider back.
func (b *Broker) reconcile(ctx context.Context, rc *receiptDraft, p Provider, c *plan.Capability, args json.RawMessage) outcome {
	if !p.Profile().Readback {
		return outcome{status: StatusAmbiguous, code: CodeDispatchUnknown}
	}
	q, err := callQuery(ctx, p, rc.binding)
	if err != nil {
		q = QueryResult{Kind: QueryUnavailable}
	}
	switch q.Kind {
	case QueryFound:
		return b.decided(rc, c, q.Projection, q.Result)
	case QueryTombstone:
		if !b.takeProjection(rc, q.Projection) {
			return outcome{status: StatusAmbiguous, code: CodeProviderAnswerInvalid}
		}
		if q.Projection.Decision == DecisionRejected {
			return outcome{status: StatusDenied, code: CodeProviderRejected}
		}
		return outcome{status: StatusAmbiguous, code: CodeProviderResultCompacted}
	case QueryAbsent:
		// Never decided, read under the provider's current epoch: the one
		// case where presenting the same binding again cannot make a
		// second effect. Strict only; its error stays unknown.
		if c.Acceptance() == plan.AcceptanceStrict && canonjson.IsDigest(q.AbsenceSHA256) {
			b.cfg.Ledger.Append(EventCallDispatched, map[string]string{"call_id": rc.call.callID, "approval_request_id": rc.approvalID})
			res, err := callAccept(ctx, p, rc.binding, args)
			if err == nil {
				return b.accepted(rc, c, res)
			}
			if errPanic(err) {
				return outcome{status: StatusAmbiguous, code: CodeHandlerPanicked}
			}
		}
	}
	// epoch_retired, unavailable, or an absence that allows nothing.
	return outcome{status: StatusAmbiguous, code: CodeDispatchUnknown}
}

// accepted maps an Accept result to the call's outcome.
func (b *Broker) accepted(rc *receiptDraft, c *plan.Capability, res AcceptResult) outcome {
	switch res.Kind {
	case AcceptTerminal:
		return b.decided(rc, c, res.Projection, res.Result)
	case AcceptPresentationRejected:
		return outcome{status: StatusError, code: CodeProviderPresentationRejected}
	case AcceptConflict:
		return outcome{status: StatusDenied, code: CodeProviderConflict}
	case AcceptEpochRejected:
		return outcome{status: StatusDenied, code: CodeProviderEpochRejected}
	}
	return outcome{status: StatusAmbiguous, code: CodeProviderAnswerInvalid}
}

// decided maps a terminal decision (new, replayed or read back) to the
// call's outcome; the receipt references the provider's decision receipt.
func (b *Broker) decided(rc *receiptDraft, c *plan.Capability, proj *DecisionProjection, result json.RawMessage) outcome {
	if !b.takeProjection(rc, proj) {
		return outcome{status: StatusAmbiguous, code: CodeProviderAnswerInvalid}
	}
	switch proj.Decision {
	case DecisionCommitted, DecisionNoChange:
		if result == nil {
			// A replay of a decision compacted to its tombstone: decided,
			// but its result is gone (as a Query tombstone says).
			return outcome{status: StatusAmbiguous, code: CodeProviderResultCompacted}
		}
		canon, status, code := checkResult(c, result)
		return outcome{result: canon, status: status, code: code}
	case DecisionRejected:
		return outcome{status: StatusDenied, code: CodeProviderRejected}
	}
	return outcome{status: StatusAmbiguous, code: CodeProviderAnswerInvalid}
}

// takeProjection keeps a provider's projection for the receipt and the
// journal if it is one of this call's binding: a projection of another
// binding, or without a receipt digest, proves nothing.
func (b *Broker) takeProjection(rc *receiptDraft, proj *DecisionProjection) bool {
	if proj == nil || proj.BindingSHA256 != rc.binding.BindingSHA256 || !canonjson.IsDigest(proj.ReceiptSHA256) {
		return false
	}
	kept := *proj
	rc.projection = &kept
	return true
}

// panicked wraps a Provider's panic: like a handler's, it may have acted.
type panicked struct{}

func (panicked) Error() string { return "broker: the provider panicked" }

func errPanic(err error) bool { _, ok := err.(panicked); return ok }

func callAccept(ctx context.Context, p Provider, eb EffectBinding, args json.RawMessage) (res AcceptResult, err error) {
	defer func() {
		if recover() != nil {
			res, err = AcceptResult{}, panicked{}
		}
	}()
	return p.Accept(ctx, eb, args)
}

func callQuery(ctx context.Context, p Provider, eb EffectBinding) (res QueryResult, err error) {
	defer func() {
		if recover() != nil {
			res, err = QueryResult{}, panicked{}
		}
	}()
	return p.Query(ctx, eb)
}

// finishUnknown answers a call an earlier attempt of the run began to
// dispatch and recorded no end for. A call to a Provider under strict or
// no_blind_retry acceptance is reconciled with the binding it was
// dispatched with; any other stays dispatch_outcome_unknown, never resent.
func (b *Broker) finishUnknown(ctx context.Context, rc *receiptDraft, jc JournaledCall, c *plan.Capability, args json.RawMessage) *Response {
	h, _ := b.cfg.Handlers.lookup(c.Handler())
	p, ok := h.(Provider)
	if !ok || c.Acceptance() == plan.AcceptanceOff || jc.Binding == nil || !b.sameCall(*jc.Binding, rc, c) {
		return b.finish(rc, StatusAmbiguous, CodeDispatchUnknown, nil)
	}
	// The approval (if any) was decided and crossed in that attempt.
	rc.binding, rc.approvalID = *jc.Binding, jc.Binding.ApprovalRequestID
	rc.decisionReplayed, rc.dispatched, rc.journaled = true, true, true
	ctx, release := callctx.Dispatched(ctx)
	defer release()
	o := b.reconcile(withEffectBinding(ctx, rc.binding), rc, p, c, args)
	return b.finish(rc, o.status, o.code, o.result)
}
