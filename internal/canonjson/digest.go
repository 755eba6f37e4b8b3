package canonjson

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Digest domains (SPEC.md section 3), one per kind of document: a digest
// computed over one kind can never be mistaken for one over another, even
// when a guest chooses the bytes (its arguments can spell any JSON
// document). Domains lists them; docs/security.md shows the same table,
// and a test keeps each domain to the call sites of its kind.
const (
	DomainGrant            = "apysup.grant.v1"
	DomainPlan             = "apysup.plan.v1"
	DomainReceipt          = "apysup.receipt.v1"
	DomainRequest          = "apysup.request.v1"
	DomainResponse         = "apysup.response.v1"
	DomainArguments        = "apysup.arguments.v1"
	DomainWorkspace        = "apysup.workspace.v1"
	DomainWorkspaceTree    = "apysup.workspace_tree.v1"
	DomainWorkspaceRequest = "apysup.workspace_request.v1"
	DomainEvent            = "apysup.event.v1"
	DomainJournal          = "apysup.journal.v1"
	DomainRunRequest       = "apysup.run_request.v1"
	DomainEffect           = "apysup.effect.v1"
	DomainAuthorization    = "apysup.authorization.v1"
	DomainEffectBinding    = "apysup.effect_binding.v1"
	DomainKVCredential     = "apysup.kv_credential.v1"
	DomainKVContext        = "apysup.kv_context.v1"
	DomainKVRef            = "apysup.kv_ref.v1"
	DomainKVDecision       = "apysup.kv_decision.v1"
	DomainKVOrder          = "apysup.kv_order.v1"
	DomainKVAbsence        = "apysup.kv_absence.v1"
)

// DomainKind is one row of the domain table: which kind of document a
// domain's digests are taken over.
type DomainKind struct {
	Domain string
	Over   string
}

// Domains is the table of every digest domain.
var Domains = []DomainKind{
	{DomainGrant, "a grant's canonical policy (the Plan's policy_sha256)"},
	{DomainPlan, "the Plan evidence document (the Plan identity)"},
	{DomainReceipt, "a call receipt without its receipt_id"},
	{DomainRequest, `a call's request {"arguments","call_id","capability"} (request_sha256)`},
	{DomainResponse, "a handler's canonical result (response_sha256, transcript result_sha256)"},
	{DomainArguments, "a call's canonical arguments alone (approval records, transcript arguments_sha256)"},
	{DomainWorkspace, "a workspace receipt without its receipt_id"},
	{DomainWorkspaceTree, "a workspace tree: its sorted entries (initial and final tree digests)"},
	{DomainWorkspaceRequest, `a run's workspace request {"args","export","run_id","script"}`},
	{DomainEvent, "a run ledger event"},
	{DomainJournal, "an entry of the supervisor's journal (its hash chain)"},
	{DomainRunRequest, `what makes a run under an idempotency key the same run {"args","backend","parent","script_sha256","surface"}`},
	{DomainEffect, `a call's effect id {"call_id","plan_sha256","run_id"}`},
	{DomainAuthorization, `a call's authorization id {"approval_request_id","call_id","policy_sha256","run_id"}`},
	{DomainEffectBinding, "an effect binding without its binding_sha256 (what a provider recomputes)"},
	{DomainKVCredential, `a strict kv credential's key id and MAC key {"secret","use"}`},
	{DomainKVContext, `a strict kv provider's security context {"sender","subject","tenant"}`},
	{DomainKVRef, `a strict kv provider's scoped identity or reference {"kind","parts"}`},
	{DomainKVDecision, "a strict kv provider's decision receipt without its receipt_sha256"},
	{DomainKVOrder, "a strict kv provider's policy order receipt (activation, revocation, epoch retirement)"},
	{DomainKVAbsence, `a strict kv provider's absence witness {"authorization_key","binding_sha256","effect_key","epoch","observed_sequence"}`},
}

// DigestPrefix starts every digest string.
const DigestPrefix = "sha256:"

// Digest returns "sha256:<hex>" of DOMAIN || 0x00 || canonical.
func Digest(domain string, canonical []byte) string {
	h := sha256.New()
	h.Write([]byte(domain))
	h.Write([]byte{0})
	h.Write(canonical)
	var sum [sha256.Size]byte
	return digestString(h.Sum(sum[:0]))
}

// digestString is "sha256:<hex of sum>", built in one allocation: a
// Broker call computes about ten digests (receipt, ledger events, request,
// binding), and the prefix, the hex and the concatenation were one each.
func digestString(sum []byte) string {
	var out [len(DigestPrefix) + 2*sha256.Size]byte
	copy(out[:], DigestPrefix)
	hex.Encode(out[len(DigestPrefix):], sum)
	return string(out[:len(DigestPrefix)+hex.EncodedLen(len(sum))])
}

// PlainDigest returns "sha256:<hex>" of data without a domain, for bodies
// whose digest is a fact about bytes (transport evidence body_sha256).
func PlainDigest(data []byte) string {
	sum := sha256.Sum256(data)
	return digestString(sum[:])
}

// IsDigest reports whether s is a well-formed "sha256:<64 lowercase hex>".
func IsDigest(s string) bool {
	hexPart, ok := strings.CutPrefix(s, DigestPrefix)
	if !ok || len(hexPart) != 64 {
		return false
	}
	for i := 0; i < len(hexPart); i++ {
		c := hexPart[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
