package journal

import (
	"context"
	"encoding/json"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/canonjson"
)

// ForRun is the broker.CallJournal of the run under key (begun with
// BeginRun): the Broker's boundaries, recorded in this journal.
func (j *Journal) ForRun(key string) broker.CallJournal { return runJournal{j: j, key: key} }

type runJournal struct {
	j   *Journal
	key string
}

func (r runJournal) Intent(ctx context.Context, callID, requestSHA256 string) (broker.JournaledCall, error) {
	c, created, err := r.j.Intent(ctx, r.key, callID, requestSHA256)
	if err != nil {
		return broker.JournaledCall{}, err
	}
	if created {
		return broker.JournaledCall{State: broker.JournalNew}, nil
	}
	switch c.State {
	case CallCompleted:
		jc := broker.JournaledCall{State: broker.JournalCompleted}
		if c.Receipt == nil { // a refusal without a receipt (the grant refuses it again), or a tombstone
			jc.Receipt = broker.Receipt{Outcome: c.Outcome, ErrorCode: c.ErrorCode}
			return jc, nil
		}
		rec, err := broker.DecodeReceipt(c.Receipt)
		if err != nil {
			return broker.JournaledCall{}, fail(CodeCorrupt, "a recorded receipt does not decode", err)
		}
		jc.Receipt = rec
		if c.Projection != nil {
			var p broker.DecisionProjection
			if err := canonjson.DecodeStrict(c.Projection, canonjson.MaxGuestBytes, &p); err != nil || p.ReceiptSHA256 != rec.ProviderReceiptSHA256 {
				return broker.JournaledCall{}, fail(CodeCorrupt, "a recorded provider projection does not decode or match its receipt", err)
			}
			jc.Projection = &p
		}
		if rec.Outcome == broker.StatusOK {
			var resp struct {
				Result json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal(c.Response, &resp); err != nil || resp.Result == nil {
				return broker.JournaledCall{}, fail(CodeCorrupt, "a recorded response has no result", err)
			}
			jc.Result = resp.Result
		}
		return jc, nil
	case CallDispatching:
		jc := broker.JournaledCall{State: broker.JournalUnknown}
		if c.Binding != nil {
			var b broker.EffectBinding
			if err := canonjson.DecodeStrict(c.Binding, canonjson.MaxGuestBytes, &b); err != nil {
				return broker.JournaledCall{}, fail(CodeCorrupt, "a recorded effect binding does not decode", err)
			}
			jc.Binding = &b
		}
		return jc, nil
	case CallDecided:
		return broker.JournaledCall{State: broker.JournalPending, ApprovalID: c.ApprovalID,
			ApprovalState: broker.ApprovalState(c.ApprovalState), NotAfter: time.UnixMilli(c.NotAfter)}, nil
	}
	return broker.JournaledCall{State: broker.JournalPending}, nil
}

func (r runJournal) AwaitApproval(ctx context.Context, callID, approvalID string) error {
	return r.j.AwaitApproval(ctx, r.key, callID, approvalID)
}

func (r runJournal) Decide(ctx context.Context, callID, approvalID string, state broker.ApprovalState, notAfter time.Time) error {
	return r.j.Decide(ctx, r.key, callID, approvalID, string(state), notAfter.UnixMilli())
}

func (r runJournal) BeginDispatch(ctx context.Context, callID string, binding broker.EffectBinding) error {
	raw, err := canonjson.Marshal(binding)
	if err != nil {
		return fail(CodeInvalid, "an effect binding does not encode", err)
	}
	return r.j.BeginDispatch(ctx, r.key, callID, raw)
}

func (r runJournal) Complete(ctx context.Context, callID string, c broker.JournalCompletion) error {
	var projection []byte
	if c.Projection != nil {
		raw, err := canonjson.Marshal(c.Projection)
		if err != nil {
			return fail(CodeInvalid, "a provider projection does not encode", err)
		}
		projection = raw
	}
	return r.j.Complete(ctx, r.key, callID, Completion{Outcome: c.Outcome, ErrorCode: c.ErrorCode,
		Response: c.Response, Receipt: c.Receipt, ReceiptID: c.ReceiptID, Projection: projection})
}
