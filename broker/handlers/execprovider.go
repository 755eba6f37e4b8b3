package handlers

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/internal/pattern"
	"github.com/apysup/apysup/plan"
)

// An exec handler whose config has a "provider" section is a broker.Provider
// and a broker.Revoker: each Accept, Query, Revoke and profile read runs the
// tool once with one request on stdin and reads one answer from stdout
// (docs/provider-protocol.md). The tool is host code, but its answer is
// parsed as untrusted input: an answer that is malformed, oversized, of a
// kind the request cannot have, missing a field, or about another binding
// is provider_bad_answer, never a decision.

// ProviderProtocol tags every request and answer of the provider protocol.
const ProviderProtocol = "apysup.provider.v1"

// Bounds of the provider protocol.
const (
	// MaxProviderEnvelopeBytes is what an answer may hold beyond its
	// result (max_output_bytes): kind, projection, reasons.
	MaxProviderEnvelopeBytes = 16 << 10
	// maxRetentionSeconds bounds a declared retention (about 1000 years).
	maxRetentionSeconds = 1 << 35
)

// Provider protocol operations.
const (
	opProfile = "profile"
	opAccept  = "accept"
	opQuery   = "query"
	opRevoke  = "revoke"
)

var (
	// providerNameRE: a provider id or an epoch, as the tool names them.
	providerNameRE = pattern.New("A-Za-z0-9", "A-Za-z0-9._:-", 128)
	// reasonRE: a bounded, opaque reason token (never a message).
	reasonRE = pattern.New("a-z", "a-z0-9_", 64)
	// rejectReasons are the reasons of a rejected decision.
	rejectReasons = []string{"not_yet_valid", "expired", "revoked", "policy_basis_stale", "policy_denied"}
)

// compactedReason marks the replay of a decision whose receipt was
// compacted into a tombstone: the decision stands, its result is gone.
const compactedReason = "compacted"

// providerConfig reads the config's "provider" section: the profile the
// Plan may rely on, and the credential the handler presents. The tool's
// own profile must cover it at run time (sealing cannot run the tool).
func (b *builder) providerConfig(f *plan.Fields) *providerConfig {
	if !f.Has("provider") {
		return nil
	}
	s := f.Sub("provider", false)
	if s == nil {
		return nil
	}
	p := &broker.ProviderProfile{ProviderID: s.Str("id", true)}
	if !providerNameRE.MatchString(p.ProviderID) {
		s.Problem("id", "must match "+providerNameRE.String())
	}
	for _, g := range s.Strings("guarantees", true) {
		if !slices.Contains(broker.StrictGuarantees, broker.Guarantee(g)) || slices.Contains(p.Guarantees, broker.Guarantee(g)) {
			s.Problem("guarantees", "must list distinct guarantees (exact_binding, single_use, exact_replay, atomic_commit, revocation_ordering, query_absence, retention_tombstones, epoch_fence)")
			break
		}
		p.Guarantees = append(p.Guarantees, broker.Guarantee(g))
	}
	p.RetentionSeconds = s.IntegerIn("retention_seconds", 0, 0, maxRetentionSeconds)
	p.Readback = s.Bool("readback", false)
	cred := b.providerCredential(s)
	s.Done()
	return &providerConfig{profile: p, credential: cred}
}

// providerConfig is what a provider section configures.
type providerConfig struct {
	profile    *broker.ProviderProfile
	credential []byte // nil: requests carry no presentation
}

// providerCredential reads credential_file: the absolute path of a file
// holding the key the tool issued, in hex (at least 16 bytes). Build reads
// it; Checker only checks the path (it reads no secret).
func (b *builder) providerCredential(s *plan.Fields) []byte {
	if !s.Has("credential_file") {
		return nil
	}
	path := s.Str("credential_file", false)
	if !filepath.IsAbs(path) || filepath.Clean(path) != path {
		s.Problem("credential_file", "must be an absolute, clean path")
		return nil
	}
	if b.checkOnly {
		return []byte{}
	}
	raw, err := readKeyFile(path)
	key, hexErr := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil || hexErr != nil || len(key) < minCredentialBytes {
		b.problems = append(b.problems, problem(CodeHandlerSetup, s.At("credential_file"),
			"cannot be read as a key of at least 16 bytes in hex"))
		return nil
	}
	return key
}

// readKeyFile reads at most 4 KiB of a key file: a key is short.
func readKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 4<<10))
}

// execProvider is an exec handler that speaks the provider protocol.
type execProvider struct {
	*execHandler
	declared   broker.ProviderProfile // the config's, without an epoch
	credential []byte                 // the key presentations are made with; nil for none
	checkOnly  bool                   // built by Checker: never runs the tool

	mu    sync.Mutex
	epoch string // the tool's epoch once its profile matched; "" = read it again
}

var (
	_ broker.Provider = (*execProvider)(nil)
	_ broker.Revoker  = (*execProvider)(nil)
	_ broker.Handler  = (*execProvider)(nil)
)

// Profile is the config's profile with the tool's current epoch. At seal
// time (Checker) it is the config's alone. When the tool cannot be read or
// declares less than the config, it declares nothing (no guarantee, no
// readback), so that strict acceptance fails before dispatch.
func (p *execProvider) Profile() broker.ProviderProfile {
	if p.checkOnly {
		return p.declaredProfile("")
	}
	prof, err := p.profile(context.Background())
	if err != nil {
		return broker.ProviderProfile{ProviderID: p.declared.ProviderID}
	}
	return prof
}

func (p *execProvider) declaredProfile(epoch string) broker.ProviderProfile {
	prof := p.declared
	prof.Guarantees = slices.Clone(p.declared.Guarantees)
	prof.Epoch = epoch
	return prof
}

// profile reads the tool's profile once and checks it against the config's;
// a failure is not remembered, an epoch is until the tool says it retired.
func (p *execProvider) profile(ctx context.Context) (broker.ProviderProfile, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.epoch == "" {
		out, err := p.exchange(ctx, providerRequest{Op: opProfile}, "")
		if err != nil {
			return broker.ProviderProfile{}, err
		}
		tool, err := parseProfileAnswer(out)
		if err != nil {
			return broker.ProviderProfile{}, err
		}
		if !profileCovers(tool, p.declared) {
			return broker.ProviderProfile{}, fail(CodeProviderProfileMismatch)
		}
		p.epoch = tool.Epoch
	}
	return p.declaredProfile(p.epoch), nil
}

// forgetEpoch makes the next call read the profile again after the tool
// answered that epoch is retired.
func (p *execProvider) forgetEpoch(epoch string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.epoch == epoch {
		p.epoch = ""
	}
}

// profileCovers reports whether the tool's profile promises at least what
// the config declares, for the same provider.
func profileCovers(tool, declared broker.ProviderProfile) bool {
	if tool.ProviderID != declared.ProviderID || tool.RetentionSeconds < declared.RetentionSeconds || declared.Readback && !tool.Readback {
		return false
	}
	for _, g := range declared.Guarantees {
		if !slices.Contains(tool.Guarantees, g) {
			return false
		}
	}
	return true
}

// Call serves a capability whose acceptance is off (or a dispatch that is
// not Accept): it presents the call's binding once and returns the result
// of a committed or no-change decision; any other answer (a refusal, or a
// replay whose result was compacted away) is provider_refused. A binding
// without a provider gets the tool's current one.
func (p *execProvider) Call(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	b, ok := broker.EffectBindingFrom(ctx)
	if !ok {
		return nil, fail(CodeProviderNoBinding)
	}
	if b.ProviderID == "" {
		prof, err := p.profile(ctx)
		if err != nil {
			return nil, err
		}
		b.ProviderID, b.ProviderEpoch = prof.ProviderID, prof.Epoch
		b = b.Seal()
	}
	r, err := p.Accept(ctx, b, args)
	if err != nil {
		return nil, err
	}
	if r.Kind != broker.AcceptTerminal || r.Projection.Decision == broker.DecisionRejected || r.Result == nil {
		return nil, fail(CodeProviderRefused)
	}
	return r.Result, nil
}

// Accept presents b and its arguments to the tool. An error means the
// outcome is unknown (the tool may have committed): query it. When the
// tool's profile does not cover the config's, nothing is presented and the
// answer says so (presentation_rejected, reason provider_profile_mismatch):
// a known refusal before dispatch. A tool that cannot answer its profile
// (a store fenced off after a restore) is an error, as it would be for the
// call itself.
func (p *execProvider) Accept(ctx context.Context, b broker.EffectBinding, args json.RawMessage) (broker.AcceptResult, error) {
	if _, err := p.profile(ctx); err != nil {
		if CodeOf(err) == CodeProviderProfileMismatch {
			return broker.AcceptResult{Kind: broker.AcceptPresentationRejected, Reason: CodeProviderProfileMismatch}, nil
		}
		return broker.AcceptResult{}, err
	}
	canon, err := canonjson.Canonical(args)
	if err != nil {
		return broker.AcceptResult{}, fail(CodeBadArguments)
	}
	out, err := p.exchange(ctx, providerRequest{Op: opAccept, Binding: &b, Arguments: canon}, b.BindingSHA256)
	if err != nil {
		return broker.AcceptResult{}, err
	}
	r, err := parseAcceptAnswer(out, b, p.maxOutput)
	if err == nil && r.Kind == broker.AcceptEpochRejected {
		p.forgetEpoch(b.ProviderEpoch)
	}
	return r, err
}

// Query asks the tool what it decided for b. A binding that names no
// provider cannot be asked (its epoch is unknown): unavailable.
func (p *execProvider) Query(ctx context.Context, b broker.EffectBinding) (broker.QueryResult, error) {
	if b.ProviderID == "" {
		return broker.QueryResult{Kind: broker.QueryUnavailable, Reason: "binding_names_no_provider"}, nil
	}
	if _, err := p.profile(ctx); err != nil {
		return broker.QueryResult{}, err
	}
	out, err := p.exchange(ctx, providerRequest{Op: opQuery, Binding: &b}, b.BindingSHA256)
	if err != nil {
		return broker.QueryResult{}, err
	}
	r, err := parseQueryAnswer(out, b, p.maxOutput)
	if err == nil && r.Kind == broker.QueryEpochRetired {
		p.forgetEpoch(b.ProviderEpoch)
	}
	return r, err
}

// Revoke revokes the grant policySHA256 at the tool and returns the digest
// of its policy order receipt.
func (p *execProvider) Revoke(ctx context.Context, policySHA256 string) (string, error) {
	if !canonjson.IsDigest(policySHA256) {
		return "", fail(CodeBadArguments)
	}
	if _, err := p.profile(ctx); err != nil {
		return "", err
	}
	out, err := p.exchange(ctx, providerRequest{Op: opRevoke, PolicySHA256: policySHA256}, policySHA256)
	if err != nil {
		return "", err
	}
	return parseRevokeAnswer(out)
}

// providerRequest is the one JSON object a tool reads on stdin (canonical).
type providerRequest struct {
	Protocol     string                `json:"protocol"`
	Op           string                `json:"op"`
	Binding      *broker.EffectBinding `json:"binding,omitempty"`
	Arguments    json.RawMessage       `json:"arguments,omitempty"`
	PolicySHA256 string                `json:"policy_sha256,omitempty"`
	Presentation *presentation         `json:"presentation,omitempty"`
}

// presentation authenticates a request to the tool that issued the
// credential: the key's id and an HMAC of the operation and what it is
// about (the binding digest, or the revoked policy), never the key.
type presentation struct {
	KeyID string `json:"key_id"`
	MAC   string `json:"mac"`
}

// HMAC labels of a presentation (docs/provider-protocol.md).
const (
	keyIDLabel         = "apysup.provider.key_id.v1"
	presentationLabel  = "apysup.provider.presentation.v1"
	minCredentialBytes = 16
)

func present(key []byte, op, subject string) *presentation {
	id := hmac.New(sha256.New, key)
	id.Write([]byte(keyIDLabel))
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(presentationLabel + "\x00" + op + "\x00" + subject))
	return &presentation{KeyID: hex.EncodeToString(id.Sum(nil)), MAC: hex.EncodeToString(mac.Sum(nil))}
}

// exchange runs the tool with one request, presented with the credential
// (if any) over subject, and returns its raw answer.
func (p *execProvider) exchange(ctx context.Context, req providerRequest, subject string) ([]byte, error) {
	req.Protocol = ProviderProtocol
	if len(p.credential) > 0 && req.Op != opProfile {
		req.Presentation = present(p.credential, req.Op, subject)
	}
	in, err := canonjson.Marshal(req)
	if err != nil {
		return nil, fail(CodeBadArguments)
	}
	return p.run(ctx, in, p.maxOutput+MaxProviderEnvelopeBytes)
}

// providerAnswer is every member an answer may have; which ones it must
// and may have depends on the operation and the kind (answerShapes).
type providerAnswer struct {
	Protocol                 *string                    `json:"protocol"`
	Kind                     *string                    `json:"kind"`
	Replay                   *bool                      `json:"replay"`
	Projection               *broker.DecisionProjection `json:"projection"`
	Result                   json.RawMessage            `json:"result"`
	Reason                   *string                    `json:"reason"`
	AbsenceSHA256            *string                    `json:"absence_sha256"`
	PolicyOrderReceiptSHA256 *string                    `json:"policy_order_receipt_sha256"`
	ProviderID               *string                    `json:"provider_id"`
	Epoch                    *string                    `json:"epoch"`
	Guarantees               *[]string                  `json:"guarantees"`
	RetentionSeconds         *int64                     `json:"retention_seconds"`
	Readback                 *bool                      `json:"readback"`
}

// shape is what an answer of one kind must and may hold besides protocol
// and kind.
type shape struct{ required, optional []string }

var answerShapes = map[string]map[string]shape{
	opProfile: {"profile": {required: []string{"provider_id", "epoch", "guarantees", "retention_seconds", "readback"}}},
	opAccept: {
		broker.AcceptTerminal:             {required: []string{"replay", "projection"}, optional: []string{"result", "reason"}},
		broker.AcceptPresentationRejected: {required: []string{"reason"}},
		broker.AcceptConflict:             {required: []string{"reason"}},
		broker.AcceptEpochRejected:        {optional: []string{"reason"}},
	},
	opQuery: {
		broker.QueryFound:        {required: []string{"projection"}, optional: []string{"result"}},
		broker.QueryTombstone:    {required: []string{"projection"}},
		broker.QueryAbsent:       {required: []string{"absence_sha256"}},
		broker.QueryEpochRetired: {optional: []string{"reason"}},
		broker.QueryUnavailable:  {required: []string{"reason"}},
	},
	opRevoke: {"revoked": {required: []string{"policy_order_receipt_sha256"}}},
}

func (a *providerAnswer) members() map[string]bool {
	return map[string]bool{
		"replay": a.Replay != nil, "projection": a.Projection != nil, "result": a.Result != nil,
		"reason": a.Reason != nil, "absence_sha256": a.AbsenceSHA256 != nil,
		"policy_order_receipt_sha256": a.PolicyOrderReceiptSHA256 != nil,
		"provider_id":                 a.ProviderID != nil, "epoch": a.Epoch != nil, "guarantees": a.Guarantees != nil,
		"retention_seconds": a.RetentionSeconds != nil, "readback": a.Readback != nil,
	}
}

// decodeAnswer reads an answer to op strictly: one strict JSON object of at
// most maxBytes, this protocol, a kind op can have, exactly the members of
// that kind (a bounded reason, when it has one). It returns the kind.
func decodeAnswer(out []byte, op string, maxBytes int) (*providerAnswer, string, error) {
	var a providerAnswer
	if canonjson.DecodeStrict(out, maxBytes, &a) != nil || a.Protocol == nil || *a.Protocol != ProviderProtocol || a.Kind == nil {
		return nil, "", fail(CodeProviderBadAnswer)
	}
	s, ok := answerShapes[op][*a.Kind]
	if !ok {
		return nil, "", fail(CodeProviderBadAnswer)
	}
	for name, present := range a.members() {
		required := slices.Contains(s.required, name)
		allowed := required || slices.Contains(s.optional, name)
		if present && !allowed || required && !present {
			return nil, "", fail(CodeProviderBadAnswer)
		}
	}
	if a.Reason != nil && !reasonRE.MatchString(*a.Reason) {
		return nil, "", fail(CodeProviderBadAnswer)
	}
	return &a, *a.Kind, nil
}

func parseProfileAnswer(out []byte) (broker.ProviderProfile, error) {
	a, _, err := decodeAnswer(out, opProfile, MaxProviderEnvelopeBytes)
	if err != nil {
		return broker.ProviderProfile{}, err
	}
	p := broker.ProviderProfile{ProviderID: *a.ProviderID, Epoch: *a.Epoch, RetentionSeconds: *a.RetentionSeconds, Readback: *a.Readback}
	if !providerNameRE.MatchString(p.ProviderID) || !providerNameRE.MatchString(p.Epoch) || p.RetentionSeconds < 0 {
		return broker.ProviderProfile{}, fail(CodeProviderBadAnswer)
	}
	for _, g := range *a.Guarantees {
		if !slices.Contains(broker.StrictGuarantees, broker.Guarantee(g)) || slices.Contains(p.Guarantees, broker.Guarantee(g)) {
			return broker.ProviderProfile{}, fail(CodeProviderBadAnswer)
		}
		p.Guarantees = append(p.Guarantees, broker.Guarantee(g))
	}
	return p, nil
}

func parseAcceptAnswer(out []byte, b broker.EffectBinding, maxResult int) (broker.AcceptResult, error) {
	a, kind, err := decodeAnswer(out, opAccept, maxResult+MaxProviderEnvelopeBytes)
	if err != nil {
		return broker.AcceptResult{}, err
	}
	r := broker.AcceptResult{Kind: kind}
	if a.Reason != nil {
		r.Reason = *a.Reason
	}
	if kind == broker.AcceptTerminal {
		// The one reason a terminal answer has: the replay of a decision
		// whose receipt was compacted, which has no result any more.
		r.Replay = *a.Replay
		compacted := r.Reason == compactedReason
		if r.Reason != "" && !(compacted && r.Replay) {
			return broker.AcceptResult{}, fail(CodeProviderBadAnswer)
		}
		if r.Projection, r.Result, err = decision(a, b, maxResult, !compacted); err != nil {
			return broker.AcceptResult{}, err
		}
	}
	return r, nil
}

func parseQueryAnswer(out []byte, b broker.EffectBinding, maxResult int) (broker.QueryResult, error) {
	a, kind, err := decodeAnswer(out, opQuery, maxResult+MaxProviderEnvelopeBytes)
	if err != nil {
		return broker.QueryResult{}, err
	}
	r := broker.QueryResult{Kind: kind}
	if a.Reason != nil {
		r.Reason = *a.Reason
	}
	switch kind {
	case broker.QueryFound, broker.QueryTombstone:
		// A tombstone keeps the decision, not the result.
		if r.Projection, r.Result, err = decision(a, b, maxResult, kind == broker.QueryFound); err != nil {
			return broker.QueryResult{}, err
		}
	case broker.QueryAbsent:
		if !canonjson.IsDigest(*a.AbsenceSHA256) {
			return broker.QueryResult{}, fail(CodeProviderBadAnswer)
		}
		r.AbsenceSHA256 = *a.AbsenceSHA256
	}
	return r, nil
}

func parseRevokeAnswer(out []byte) (string, error) {
	a, _, err := decodeAnswer(out, opRevoke, MaxProviderEnvelopeBytes)
	if err != nil {
		return "", err
	}
	if !canonjson.IsDigest(*a.PolicyOrderReceiptSHA256) {
		return "", fail(CodeProviderBadAnswer)
	}
	return *a.PolicyOrderReceiptSHA256, nil
}

// decision checks a projection against the binding presented and returns
// it with the result in canonical form: a committed or no-change decision
// has one (withResult) of at most maxResult bytes, a rejected one none.
func decision(a *providerAnswer, b broker.EffectBinding, maxResult int, withResult bool) (*broker.DecisionProjection, json.RawMessage, error) {
	pr := a.Projection
	if !projectionOf(pr, b) {
		return nil, nil, fail(CodeProviderBadAnswer)
	}
	if pr.Decision == broker.DecisionRejected || !withResult {
		if a.Result != nil {
			return nil, nil, fail(CodeProviderBadAnswer)
		}
		return pr, nil, nil
	}
	if a.Result == nil || len(a.Result) > maxResult {
		return nil, nil, fail(CodeProviderBadAnswer)
	}
	result, err := canonjson.CanonicalValidated(a.Result) // part of the validated answer
	if err != nil || len(result) > maxResult {
		return nil, nil, fail(CodeProviderBadAnswer)
	}
	return pr, result, nil
}

// projectionOf reports whether pr is a well-formed projection of a
// decision on b: its binding digest is b's, its references are digests
// (the provider scopes them: they are opaque here), the decision and its
// reason are known tokens, and the order and receipts are well formed.
func projectionOf(pr *broker.DecisionProjection, b broker.EffectBinding) bool {
	switch {
	case pr.SchemaVersion != broker.DecisionProjectionSchema,
		!canonjson.IsDigest(pr.ProviderRefSHA256),
		!canonjson.IsDigest(pr.EpochSHA256),
		!canonjson.IsDigest(pr.EffectIDSHA256),
		!canonjson.IsDigest(pr.AuthorizationIDSHA256),
		pr.BindingSHA256 != b.BindingSHA256,
		!validSequence(pr.Sequence),
		pr.PolicyOrderReceiptSHA256 != "" && !canonjson.IsDigest(pr.PolicyOrderReceiptSHA256),
		!canonjson.IsDigest(pr.ReceiptSHA256):
		return false
	}
	switch pr.Decision {
	case broker.DecisionCommitted, broker.DecisionNoChange:
		return pr.Reason == ""
	case broker.DecisionRejected:
		return slices.Contains(rejectReasons, pr.Reason)
	}
	return false
}

// validSequence reports whether s is a provider's decision sequence:
// "uint:" and a decimal of at most 20 digits without a leading zero
// (`^uint:(0|[1-9][0-9]{0,19})$`).
func validSequence(s string) bool {
	d, ok := strings.CutPrefix(s, "uint:")
	if !ok || d == "" || len(d) > 20 || d[0] == '0' && len(d) > 1 {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}
