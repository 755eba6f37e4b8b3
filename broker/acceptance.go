package broker

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/plan"
)

// Provider effect acceptance (docs/acceptance.md): the owner of an effect
// checks, where it commits the effect, that the call is still allowed, and
// can say afterwards whether it committed it. The Broker checks the Plan,
// the grant and the approval before dispatch; a Provider checks them again
// at its own commit point, in one order with revocations, and keeps an
// immutable decision receipt of each effect and authorization identity.

// Guarantee is one property a Provider declares it enforces at its commit
// point. A capability whose acceptance is strict needs all of them
// (StrictGuarantees); a Plan that asks for strict acceptance of a handler
// that declares fewer is refused at seal time, never weakened.
type Guarantee string

const (
	// The provider recomputes the binding from the values it will apply
	// and rejects a presentation whose binding differs.
	GuaranteeExactBinding Guarantee = "exact_binding"
	// An authorization identity is consumed by at most one effect.
	GuaranteeSingleUse Guarantee = "single_use"
	// The same binding presented again returns the historical decision
	// and result, never a second effect.
	GuaranteeExactReplay Guarantee = "exact_replay"
	// Identities, the effect (or a factual no-change) and the decision
	// receipt are committed in one transaction.
	GuaranteeAtomicCommit Guarantee = "atomic_commit"
	// Revocations and acceptances share one order; each decision says
	// which came first.
	GuaranteeRevocationOrdering Guarantee = "revocation_ordering"
	// Query answers absent only from a linearised read under the current
	// identity epoch, with an absence witness.
	GuaranteeQueryAbsence Guarantee = "query_absence"
	// Receipts are kept for the declared retention, then compacted into
	// tombstones that still refuse a new effect.
	GuaranteeRetention Guarantee = "retention_tombstones"
	// Identity epochs are fenced by a store that does not roll back with
	// the effect store: an old epoch never answers absent.
	GuaranteeEpochFence Guarantee = "epoch_fence"
)

// StrictGuarantees lists every guarantee, in a fixed order.
var StrictGuarantees = []Guarantee{
	GuaranteeExactBinding, GuaranteeSingleUse, GuaranteeExactReplay, GuaranteeAtomicCommit,
	GuaranteeRevocationOrdering, GuaranteeQueryAbsence, GuaranteeRetention, GuaranteeEpochFence,
}

// ProviderProfile is what a Provider declares of itself.
type ProviderProfile struct {
	// ProviderID names the provider's store and audience; stable across
	// restarts (kv: derived from its configuration).
	ProviderID string
	// Epoch is the provider's current identity epoch.
	Epoch      string
	Guarantees []Guarantee
	// RetentionSeconds: full decision receipts are kept at least this long.
	RetentionSeconds int64
	// Readback: Query can answer after a lost response (no_blind_retry
	// needs it to resolve anything).
	Readback bool
}

// Missing returns the strict guarantees the profile does not declare.
func (p ProviderProfile) Missing() []Guarantee {
	var missing []Guarantee
	for _, g := range StrictGuarantees {
		if !slices.Contains(p.Guarantees, g) {
			missing = append(missing, g)
		}
	}
	return missing
}

// EffectBindingSchema tags effect bindings.
const EffectBindingSchema = "apysup.effect_binding.v1"

// EffectBinding is everything one dispatched call binds: the Broker derives
// it before dispatch, and a Provider recomputes it from the values it will
// apply. Seal fills the three identities.
type EffectBinding struct {
	SchemaVersion     string               `json:"schema_version"`
	RunID             string               `json:"run_id"` // under an idempotency key, the same for every attempt
	PlanSHA256        string               `json:"plan_sha256"`
	CallID            string               `json:"call_id"`
	Capability        string               `json:"capability"`
	Handler           plan.HandlerIdentity `json:"handler"`
	PolicySHA256      string               `json:"policy_sha256,omitempty"` // the capability's grant, if any
	ApprovalRequestID string               `json:"approval_request_id,omitempty"`
	RequestSHA256     string               `json:"request_sha256"` // RequestDigest(call_id, capability, arguments)
	Acceptance        plan.Acceptance      `json:"acceptance"`
	ProviderID        string               `json:"provider_id,omitempty"`
	ProviderEpoch     string               `json:"provider_epoch,omitempty"`

	// EffectID is bound to the run, the Plan and the call id: every
	// attempt of a keyed run presents the same effect.
	EffectID string `json:"effect_id"`
	// AuthorizationID is bound to the grant, the run, the call id and the
	// approval where one exists: what allowed this one call.
	AuthorizationID string `json:"authorization_id"`
	// BindingSHA256 covers every field above.
	BindingSHA256 string `json:"binding_sha256"`
}

// Seal returns b with its identities computed from its other fields. It
// runs for every dispatched call, so it writes its canonical documents
// directly, into buffers on its stack (TestEffectBindingCanonicalMatchesJCS).
func (b EffectBinding) Seal() EffectBinding {
	b.SchemaVersion = EffectBindingSchema
	var buf [1024]byte
	id := append(buf[:0], '{')
	id = appendStr(id, "call_id", b.CallID, false)
	id = appendStr(id, "plan_sha256", b.PlanSHA256, false)
	id = appendStr(id, "run_id", b.RunID, false)
	b.EffectID = canonjson.Digest(canonjson.DomainEffect, append(id, '}'))
	auth := append(buf[:0], '{')
	auth = appendStr(auth, "approval_request_id", b.ApprovalRequestID, false)
	auth = appendStr(auth, "call_id", b.CallID, false)
	auth = appendStr(auth, "policy_sha256", b.PolicySHA256, false)
	auth = appendStr(auth, "run_id", b.RunID, false)
	b.AuthorizationID = canonjson.Digest(canonjson.DomainAuthorization, append(auth, '}'))
	b.BindingSHA256 = ""
	b.BindingSHA256 = canonjson.Digest(canonjson.DomainEffectBinding, b.appendCanonical(buf[:0]))
	return b
}

// appendCanonical appends the RFC 8785 form of b to o (keys sorted,
// omitempty as in the JSON tags).
func (b EffectBinding) appendCanonical(o []byte) []byte {
	o = append(o, '{')
	o = appendStr(o, "acceptance", string(b.Acceptance), false)
	o = appendStr(o, "approval_request_id", b.ApprovalRequestID, true)
	o = appendStr(o, "authorization_id", b.AuthorizationID, false)
	o = appendStr(o, "binding_sha256", b.BindingSHA256, false)
	o = appendStr(o, "call_id", b.CallID, false)
	o = appendStr(o, "capability", b.Capability, false)
	o = appendStr(o, "effect_id", b.EffectID, false)
	o = append(appendKey(o, "handler"), '{')
	o = appendStr(o, "config_sha256", b.Handler.ConfigSHA256, false)
	o = appendStr(o, "id", b.Handler.ID, false)
	o = appendStr(o, "kind", b.Handler.Kind, false)
	o = appendStr(o, "version", b.Handler.Version, false)
	o = append(o, '}')
	o = appendStr(o, "plan_sha256", b.PlanSHA256, false)
	o = appendStr(o, "policy_sha256", b.PolicySHA256, true)
	o = appendStr(o, "provider_epoch", b.ProviderEpoch, true)
	o = appendStr(o, "provider_id", b.ProviderID, true)
	o = appendStr(o, "request_sha256", b.RequestSHA256, false)
	o = appendStr(o, "run_id", b.RunID, false)
	o = appendStr(o, "schema_version", b.SchemaVersion, false)
	return append(o, '}')
}

// Verify reports whether b's identities are the ones its fields give.
func (b EffectBinding) Verify() bool { return b == b.Seal() }

type effectBindingKey struct{}

// EffectBindingFrom returns the binding of the call a handler is serving:
// the Broker puts it in the context of every dispatch, so that any handler
// can de-duplicate by EffectID.
func EffectBindingFrom(ctx context.Context) (EffectBinding, bool) {
	b, ok := ctx.Value(effectBindingKey{}).(EffectBinding)
	return b, ok
}

func withEffectBinding(ctx context.Context, b EffectBinding) context.Context {
	return context.WithValue(ctx, effectBindingKey{}, b)
}

// Decisions of a Provider (terminal outcomes of an effect identity).
const (
	DecisionCommitted = "committed"
	DecisionNoChange  = "no_change"
	DecisionRejected  = "rejected"
)

// Kinds of an Accept result.
const (
	AcceptTerminal             = "terminal"              // a decision, new or replayed
	AcceptPresentationRejected = "presentation_rejected" // malformed, unauthenticated or binding mismatch: nothing reserved
	AcceptConflict             = "conflict"              // an identity is already bound to different content
	AcceptEpochRejected        = "epoch_rejected"        // the binding's epoch is retired
)

// Kinds of a Query result.
const (
	QueryFound        = "found"
	QueryTombstone    = "tombstone"
	QueryAbsent       = "absent"        // linearised read under the current epoch: never decided
	QueryEpochRetired = "epoch_retired" // never absent for a retired epoch
	QueryUnavailable  = "unavailable"
)

// DecisionProjectionSchema tags decision projections.
const DecisionProjectionSchema = "apysup.provider_decision_projection.v1"

// DecisionProjection is the public projection of a provider's decision
// receipt: digests, a decision, a bounded reason and an order position,
// never a raw identity, target, payload, credential or path. The Broker's
// receipt references it by ReceiptSHA256; the provider's full receipt stays
// private to the provider.
type DecisionProjection struct {
	SchemaVersion         string `json:"schema_version"`
	ProviderRefSHA256     string `json:"provider_ref_sha256"`
	EpochSHA256           string `json:"epoch_sha256"`
	EffectIDSHA256        string `json:"effect_id_sha256"`
	AuthorizationIDSHA256 string `json:"authorization_id_sha256"`
	BindingSHA256         string `json:"binding_sha256"`
	Decision              string `json:"decision"`
	Reason                string `json:"reason,omitempty"` // rejected: not_yet_valid, expired, revoked, policy_basis_stale, policy_denied
	// Sequence is the decision's place in the provider's one order of
	// revocations and acceptances ("uint:N").
	Sequence                 string `json:"sequence"`
	PolicyOrderReceiptSHA256 string `json:"policy_order_receipt_sha256,omitempty"`
	ReceiptSHA256            string `json:"receipt_sha256"` // the provider's full receipt
}

// AcceptResult is what Accept returns.
type AcceptResult struct {
	Kind   string // Accept*
	Replay bool   // terminal: an exact replay of a historical decision
	// Terminal: the projection, and for committed or no_change the effect's
	// result as the guest receives it (the same bytes on replay).
	Projection *DecisionProjection
	Result     json.RawMessage
	Reason     string // presentation_rejected, conflict: a bounded token
}

// QueryResult is what Query returns.
type QueryResult struct {
	Kind       string // Query*
	Projection *DecisionProjection
	Result     json.RawMessage // found, committed or no_change: the recorded result
	// Absent: the witness of the linearised read; unavailable: a reason.
	AbsenceSHA256 string
	Reason        string
}

// Provider is a handler that accepts effects at its own commit point. Accept
// authenticates the presentation, recomputes the binding from args,
// replays an exact historical decision or commits a new one atomically;
// Query answers for a binding after a lost response. An error from Accept
// means the outcome is unknown (the Broker then queries); an error from
// Query means unavailable.
type Provider interface {
	Profile() ProviderProfile
	Accept(ctx context.Context, b EffectBinding, args json.RawMessage) (AcceptResult, error)
	Query(ctx context.Context, b EffectBinding) (QueryResult, error)
}

// Revoker is a Provider that can revoke a grant (by its policy_sha256) in
// the same order as its acceptances. It returns the digest of the policy
// order receipt of the revocation.
type Revoker interface {
	Revoke(ctx context.Context, policySHA256 string) (string, error)
}
