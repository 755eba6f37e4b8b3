package broker

import (
	"context"
	"errors"
	"fmt"

	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/plan"
)

// Codes of RevokeGrant (RevocationError).
const (
	// CodeGrantNotRevocable: the capability's handler is no Revoker: there
	// is no provider that orders a revocation with its acceptances.
	CodeGrantNotRevocable = "grant_not_revocable"
	// CodeRevocationFailed: the provider did not record the revocation
	// (its store refused or is unavailable); nothing is revoked.
	CodeRevocationFailed = "revocation_failed"
)

// RevocationError is RevokeGrant's refusal. Its text names the capability
// and the code, never the policy or the provider's own error.
type RevocationError struct {
	Code       string // CodeUnknownCapability, CodeGrantNotRevocable, CodeRevocationFailed
	Capability string
	err        error
}

func (e *RevocationError) Error() string {
	return fmt.Sprintf("broker: capability %q: %s (%s)", e.Capability, messages[e.Code], e.Code)
}

// Unwrap exposes a context error of the provider, so that errors.Is works.
func (e *RevocationError) Unwrap() error { return e.err }

// ErrorCode is the error's stable code (plan.CodeOf finds it).
func (e *RevocationError) ErrorCode() string { return e.Code }

// Revocation is a grant revoked at its provider.
type Revocation struct {
	Capability   string `json:"capability"`
	PolicySHA256 string `json:"policy_sha256"`
	// PolicyOrderReceiptSHA256 is the digest of the provider's policy
	// order receipt: a call it rejects as revoked cites it.
	PolicyOrderReceiptSHA256 string `json:"policy_order_receipt_sha256"`
}

// RevokeGrant revokes the grant of capability at the provider that serves
// it (hs, built for p), in the order of the provider's acceptances: every
// call it accepts after this is rejected (provider_rejected, reason
// revoked); one it accepted before stays accepted. Revoking twice returns
// the first revocation's receipt.
func RevokeGrant(ctx context.Context, p *plan.Plan, hs *Handlers, capability string) (Revocation, error) {
	c, ok := p.Lookup(capability)
	if !ok {
		return Revocation{}, &RevocationError{Code: CodeUnknownCapability, Capability: capability}
	}
	rev := Revocation{Capability: capability}
	for _, g := range p.Grants() {
		if g.Capability == capability {
			rev.PolicySHA256 = g.PolicySHA256
		}
	}
	h, _ := hs.lookup(c.Handler())
	r, ok := h.(Revoker)
	if !ok {
		return Revocation{}, &RevocationError{Code: CodeGrantNotRevocable, Capability: capability}
	}
	receipt, err := r.Revoke(ctx, rev.PolicySHA256)
	if err != nil || !canonjson.IsDigest(receipt) {
		e := &RevocationError{Code: CodeRevocationFailed, Capability: capability}
		if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
			e.err = ctxErr
		}
		return Revocation{}, e
	}
	rev.PolicyOrderReceiptSHA256 = receipt
	return rev, nil
}
