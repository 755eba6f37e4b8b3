package handlers

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/internal/pattern"
	"github.com/apysup/apysup/plan"
)

// A kv handler whose config says "acceptance": "strict" is a provider
// (broker.Provider, broker.Revoker): its SQLite file is the provider's own
// store, and every call is accepted, or refused, in one transaction that
// also keeps an immutable decision receipt (docs/acceptance.md).

// Bounds and defaults of a strict kv handler.
const (
	DefaultKVRetention = 7 * 24 * time.Hour
	MaxKVRetention     = 10 * 365 * 24 * time.Hour
	// MinKVCredentialBytes: a credential file's secret is at least this long.
	MinKVCredentialBytes = 32
	maxKVCredentialBytes = 4096
)

// kvPrincipalPattern is what a tenant or subject name looks like.
var kvPrincipalPattern = pattern.New("a-z0-9", "a-z0-9_.-", 64)

// kvStrictConfig is the strict part of a kv handler's config.
type kvStrictConfig struct {
	store          string // the kv file: with the namespace, the provider's identity
	credentialFile string
	epochFile      string
	tenant         string
	subject        string
	retention      time.Duration
}

// readKVStrict reads "acceptance" and, when it is strict, the fields strict
// mode needs; nil when the handler is not strict.
func readKVStrict(f *plan.Fields, store string) *kvStrictConfig {
	names := []string{"credential_file", "epoch_file", "tenant", "subject", "retention"}
	mode := "off"
	if f.Has("acceptance") {
		mode = f.Str("acceptance", false)
	}
	switch mode {
	case "off":
		for _, n := range names {
			if f.Has(n) {
				f.Problem(n, `is only read when acceptance is "strict"`)
			}
		}
		return nil
	case string(plan.AcceptanceStrict):
	default:
		f.Problem("acceptance", "must be off or strict")
		return nil
	}
	c := &kvStrictConfig{
		store:          store,
		credentialFile: f.Str("credential_file", true),
		epochFile:      f.Str("epoch_file", true),
		tenant:         f.Str("tenant", true),
		subject:        f.Str("subject", true),
		retention:      f.Duration("retention", DefaultKVRetention, time.Second, MaxKVRetention),
	}
	for _, p := range []struct{ name, file string }{{"credential_file", c.credentialFile}, {"epoch_file", c.epochFile}} {
		if f.Has(p.name) && (!filepath.IsAbs(p.file) || filepath.Clean(p.file) != p.file || strings.ContainsAny(p.file, "?#\x00")) {
			f.Problem(p.name, "must be an absolute, clean file path (no ? or #)")
		}
	}
	if f.Has("epoch_file") && c.epochFile == store {
		f.Problem("epoch_file", "must not be the store: the epoch registry is never restored with it")
	}
	for _, p := range []struct{ name, value string }{{"tenant", c.tenant}, {"subject", c.subject}} {
		if f.Has(p.name) && !kvPrincipalPattern.MatchString(p.value) {
			f.Problem(p.name, "must match "+kvPrincipalPattern.String())
		}
	}
	return c
}

// kvServed is what the provider knows of one capability it serves.
type kvServed struct {
	policy     string // the grant's policy_sha256, "" without a grant
	acceptance plan.Acceptance
}

// kvProvider is a strict kv handler.
type kvProvider struct {
	*kvHandler
	identity   plan.HandlerIdentity
	providerID string
	caps       map[string]kvServed
	cfg        *kvStrictConfig
	cred       kvCredential
	registry   *sql.DB
	now        func() time.Time
	boundary   func(string)
}

func (b *builder) kvProvider(path string, c plan.ManifestCapability, g *plan.Grant, h *kvHandler, cfg *kvStrictConfig) any {
	p := &kvProvider{kvHandler: h, identity: c.Spec.Handler, cfg: cfg, now: b.opts.Now, boundary: b.opts.ProviderBoundary,
		caps: map[string]kvServed{}}
	p.addCapability(c, g)
	if b.checkOnly {
		return p
	}
	p.providerID = kvRef("provider", cfg.store, h.namespace)
	cred, err := readKVCredential(cfg.credentialFile)
	if err != nil {
		b.problems = append(b.problems, problem(CodeHandlerSetup, path+".config.credential_file",
			"cannot read a credential: a regular file, not readable by group or others, of 32 to 4096 bytes"))
		return nil
	}
	p.cred = cred
	if p.registry, err = b.openRegistry(cfg.epochFile); err != nil {
		b.problems = append(b.problems, problem(CodeHandlerSetup, path+".config.epoch_file", "cannot open the epoch registry"))
		return nil
	}
	b.providers = append(b.providers, providerSetup{path: path, p: p})
	return p
}

// addCapability records the policy and acceptance of a capability the
// provider serves (capabilities may share one handler identity).
func (p *kvProvider) addCapability(c plan.ManifestCapability, g *plan.Grant) {
	kc := kvServed{acceptance: c.Spec.Acceptance}
	if kc.acceptance == "" {
		kc.acceptance = plan.AcceptanceOff
	}
	if g != nil && g != noGrant {
		kc.policy = g.Identity()
	}
	p.caps[c.Spec.Name] = kc
}

// Profile declares every strict guarantee.
func (p *kvProvider) Profile() broker.ProviderProfile {
	epoch := ""
	if p.registry != nil {
		if st, err := p.registryState(context.Background()); err == nil {
			epoch = st.epoch()
		}
	}
	return broker.ProviderProfile{
		ProviderID:       p.providerID,
		Epoch:            epoch,
		Guarantees:       append([]broker.Guarantee(nil), broker.StrictGuarantees...),
		RetentionSeconds: int64(p.cfg.retention / time.Second),
		Readback:         true,
	}
}

// Call serves a capability whose acceptance is no_blind_retry (or strict,
// by a Broker that does not call Accept): through the same acceptance
// transaction, with the binding the Broker put in the context.
func (p *kvProvider) Call(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	b, ok := broker.EffectBindingFrom(ctx)
	if !ok {
		return nil, fail(CodeKVAcceptanceRequired)
	}
	res, err := p.Accept(ctx, b, args)
	if err != nil {
		return nil, err
	}
	if res.Kind != broker.AcceptTerminal || res.Projection.Decision == broker.DecisionRejected || res.Result == nil {
		return nil, fail(CodeKVAcceptanceRefused)
	}
	return res.Result, nil
}

// kvCredential is a host secret's two derived values: its key id (public,
// names the credential) and its MAC key (never leaves the host and the
// store that registers it).
type kvCredential struct {
	keyID  string
	macKey []byte
}

func readKVCredential(file string) (kvCredential, error) {
	st, err := os.Lstat(file)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o077 != 0 || st.Size() > maxKVCredentialBytes {
		return kvCredential{}, errors.New("handlers: kv: unusable credential file")
	}
	secret, err := os.ReadFile(file)
	if err != nil {
		return kvCredential{}, err
	}
	secret = []byte(strings.TrimRight(string(secret), "\r\n"))
	if len(secret) < MinKVCredentialBytes || len(secret) > maxKVCredentialBytes {
		return kvCredential{}, errors.New("handlers: kv: credential too short or too long")
	}
	return kvCredentialOf(secret), nil
}

// kvCredentialOf derives the key id and the MAC key of a secret.
func kvCredentialOf(secret []byte) kvCredential {
	sum := hex.EncodeToString(secret)
	mac := canonjson.Digest(canonjson.DomainKVCredential, []byte(`{"secret":"`+sum+`","use":"mac"}`))
	return kvCredential{
		keyID:  canonjson.Digest(canonjson.DomainKVCredential, []byte(`{"secret":"`+sum+`","use":"key_id"}`)),
		macKey: []byte(mac),
	}
}

// KVPresentationSchema tags a strict kv provider's presentations.
const KVPresentationSchema = "apysup.kv_presentation.v1"

// kvPresentation is what a caller presents with a binding: the key id of
// its credential and an HMAC-SHA256 over the binding digest. The provider
// derives the security context from the credential it authenticates,
// never from anything the caller states.
type kvPresentation struct {
	SchemaVersion string `json:"schema_version"`
	KeyID         string `json:"key_id"`
	BindingSHA256 string `json:"binding_sha256"`
	MAC           string `json:"mac"` // 64 lower-case hex
}

const maxKVPresentationBytes = 1024

// present makes the presentation of a binding digest with the handler's
// own credential.
func (c kvCredential) present(binding string) []byte {
	raw, _ := json.Marshal(kvPresentation{SchemaVersion: KVPresentationSchema, KeyID: c.keyID, BindingSHA256: binding,
		MAC: hex.EncodeToString(kvMAC(c.macKey, binding))})
	return raw
}

func kvMAC(key []byte, binding string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(binding))
	return m.Sum(nil)
}

// parseKVPresentation reads a presentation strictly: untrusted input.
func parseKVPresentation(raw []byte) (kvPresentation, error) {
	var p kvPresentation
	if len(raw) > maxKVPresentationBytes || canonjson.DecodeStrict(raw, maxKVPresentationBytes, &p) != nil {
		return kvPresentation{}, errors.New("handlers: kv: malformed presentation")
	}
	mac, err := hex.DecodeString(p.MAC)
	if p.SchemaVersion != KVPresentationSchema || !canonjson.IsDigest(p.KeyID) || !canonjson.IsDigest(p.BindingSHA256) ||
		err != nil || len(mac) != sha256.Size || p.MAC != strings.ToLower(p.MAC) {
		return kvPresentation{}, errors.New("handlers: kv: malformed presentation")
	}
	return p, nil
}

// verify checks the MAC in constant time against a registered MAC key.
func (p kvPresentation) verify(macKey []byte) bool {
	mac, err := hex.DecodeString(p.MAC)
	return err == nil && hmac.Equal(mac, kvMAC(macKey, p.BindingSHA256))
}

// kvContext is the security context of an authenticated principal.
func kvContext(tenant, subject, sender string) string {
	doc, _ := json.Marshal(map[string]string{"sender": sender, "subject": subject, "tenant": tenant})
	return canonjson.Digest(canonjson.DomainKVContext, doc)
}

// kvRef is the public digest of a provider-scoped value: the provider id
// (of a store path and namespace), an epoch, an identity key scoped by
// provider, epoch and security context. Nothing in it can be read back.
func kvRef(kind string, parts ...string) string {
	doc, _ := json.Marshal(struct {
		Kind  string   `json:"kind"`
		Parts []string `json:"parts"`
	}{kind, parts})
	canon, err := canonjson.Canonical(doc)
	if err != nil {
		panic(err) // strings only
	}
	return canonjson.Digest(canonjson.DomainKVRef, canon)
}

// recompute returns the binding of what the provider will apply: the
// caller's run, Plan, call and approval, with the provider's own handler
// identity, policy, acceptance, provider id and the request digest of
// args. ok is false for a capability the provider does not serve.
func (p *kvProvider) recompute(b broker.EffectBinding, args json.RawMessage) (broker.EffectBinding, bool) {
	kc, ok := p.caps[b.Capability]
	canon, err := canonjson.Canonical(args)
	if !ok || err != nil {
		return broker.EffectBinding{}, false
	}
	want := broker.EffectBinding{
		RunID: b.RunID, PlanSHA256: b.PlanSHA256, CallID: b.CallID, Capability: b.Capability,
		Handler: p.identity, PolicySHA256: kc.policy, ApprovalRequestID: b.ApprovalRequestID,
		RequestSHA256: broker.RequestDigest(b.CallID, b.Capability, canon),
		Acceptance:    kc.acceptance, ProviderID: p.providerID, ProviderEpoch: b.ProviderEpoch,
	}
	return want.Seal(), true
}

// at marks a transaction boundary (Options.ProviderBoundary).
func (p *kvProvider) at(point string) {
	if p.boundary != nil {
		p.boundary(point)
	}
}

func presentationRejected(reason string) broker.AcceptResult {
	return broker.AcceptResult{Kind: broker.AcceptPresentationRejected, Reason: reason}
}

// Accept presents the binding with the handler's credential to its store.
func (p *kvProvider) Accept(ctx context.Context, b broker.EffectBinding, args json.RawMessage) (broker.AcceptResult, error) {
	return p.accept(ctx, p.cred.present(b.BindingSHA256), b, args)
}

// Query reads the decision of a binding, authenticated with the handler's
// credential.
func (p *kvProvider) Query(ctx context.Context, b broker.EffectBinding) (broker.QueryResult, error) {
	return p.query(ctx, p.cred.present(b.BindingSHA256), b)
}

// accept is the acceptance transaction (docs/acceptance.md): nothing
// is reserved before the presentation is authenticated and the binding
// recomputed; identities, the effect and the receipt commit together.
func (p *kvProvider) accept(ctx context.Context, raw []byte, b broker.EffectBinding, args json.RawMessage) (broker.AcceptResult, error) {
	pres, err := parseKVPresentation(raw)
	if err != nil {
		return presentationRejected("malformed"), nil
	}
	if pres.BindingSHA256 != b.BindingSHA256 {
		return presentationRejected("binding_mismatch"), nil
	}
	req, reqErr := p.parse(args)
	if reqErr != nil && CodeOf(reqErr) != CodeKVKeyNotGranted {
		return presentationRejected("malformed"), nil
	}
	want, ok := p.recompute(b, args)
	var out broker.AcceptResult
	err = p.write(ctx, "accept", func(tx *sql.Tx, st *kvTxState) error {
		ctxDigest, reason, err := p.authenticate(ctx, tx, pres)
		if err != nil || reason != "" {
			out = presentationRejected(reason)
			return err
		}
		if ok, err := p.activated(ctx, tx, b.PolicySHA256, ctxDigest); err != nil || !ok {
			out = presentationRejected("sender_authentication_failed") // the policy was not issued to this principal
			return err
		}
		if !ok || want != b {
			out = presentationRejected("binding_mismatch")
			return nil
		}
		switch {
		case st.reg.retired(b.ProviderEpoch):
			out = broker.AcceptResult{Kind: broker.AcceptEpochRejected, Reason: "epoch_retired"}
			return nil
		case b.ProviderEpoch != st.reg.epoch():
			out = presentationRejected("binding_mismatch")
			return nil
		}
		keys := p.keys(b, ctxDigest)
		found, err := p.lookup(ctx, tx, keys)
		if err != nil {
			return err
		}
		if found.kind != kvAbsent {
			out = found.acceptResult(b)
			return nil
		}
		out, err = p.decide(ctx, tx, st, b, keys, ctxDigest, req, reqErr)
		return err
	})
	if err != nil {
		return broker.AcceptResult{}, err
	}
	p.at("accept.returned")
	return out, nil
}

// decide makes a new decision for identities never seen: the policy in
// the order of revocations, then the identities, the effect and the
// receipt, in the caller's transaction.
func (p *kvProvider) decide(ctx context.Context, tx *sql.Tx, st *kvTxState, b broker.EffectBinding, keys kvKeys,
	ctxDigest string, req kvRequest, reqErr error) (broker.AcceptResult, error) {
	policyRef := ""
	policyKey := kvPolicyKey(b.PolicySHA256)
	r := kvReceipt{Binding: b, ContextSHA256: ctxDigest, ProviderEpoch: b.ProviderEpoch}
	revocation, err := p.orderReceipt(ctx, tx, kvEventRevoked, policyKey, "")
	if err != nil {
		return broker.AcceptResult{}, err
	}
	switch {
	case revocation != "":
		r.Decision, r.Reason, policyRef = broker.DecisionRejected, "revoked", revocation
	case reqErr != nil: // the key is outside the grant's key_prefix
		r.Decision, r.Reason, r.PolicyReasonCode = broker.DecisionRejected, "policy_denied", CodeKVKeyNotGranted
	}
	if policyRef == "" {
		if policyRef, err = p.orderReceipt(ctx, tx, kvEventActivated, policyKey, ctxDigest); err != nil {
			return broker.AcceptResult{}, err
		}
	}
	r.PolicyOrderReceiptSHA256 = policyRef
	now := p.now().UTC()
	var last int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(decided_unix_ns), 0) FROM apysup_acc_receipts WHERE provider = ?`,
		p.providerID).Scan(&last); err != nil || now.UnixNano() < last {
		return broker.AcceptResult{}, fail(CodeKVProviderUnavailable) // the clock went back: fail closed
	}
	r.Sequence = st.next()
	r.DecidedAt = now.Format(time.RFC3339Nano)
	for _, k := range []struct{ kind, key string }{{"effect", keys.effect}, {"authorization", keys.authorization}} {
		if _, err := tx.ExecContext(ctx, `INSERT INTO apysup_acc_identities (key, kind, provider, epoch, receipt_sha256) VALUES (?, ?, ?, ?, '')`,
			k.key, k.kind, p.providerID, b.ProviderEpoch); err != nil {
			return broker.AcceptResult{}, dbError(ctx)
		}
	}
	p.at("accept.reserved")
	var result json.RawMessage
	if r.Decision == "" {
		r.Decision, r.AuthorizationDisposition = broker.DecisionCommitted, "consumed"
		r.Effect = "put"
		if p.op != KVPut {
			r.Decision, r.Effect = broker.DecisionNoChange, "read"
		} else if v, found, err := p.value(ctx, tx, req.key); err != nil {
			return broker.AcceptResult{}, err
		} else if found && v == req.value {
			r.Decision, r.Effect = broker.DecisionNoChange, "unchanged"
		}
		if result, err = p.run(ctx, tx, req); err != nil {
			return broker.AcceptResult{}, err
		}
		r.ResultSHA256 = canonjson.PlainDigest(result)
	} else {
		r.AuthorizationDisposition = "terminally_denied"
	}
	p.at("accept.applied")
	r.seal()
	proj := p.projection(r, keys)
	if err := p.record(ctx, tx, st, r, proj, result, keys); err != nil {
		return broker.AcceptResult{}, err
	}
	p.at("accept.recorded")
	return broker.AcceptResult{Kind: broker.AcceptTerminal, Projection: &proj, Result: result}, nil
}

// query is the readback of a binding: a linearised read (the store's
// write lock) under the current epoch.
func (p *kvProvider) query(ctx context.Context, raw []byte, b broker.EffectBinding) (broker.QueryResult, error) {
	pres, err := parseKVPresentation(raw)
	if err != nil || pres.BindingSHA256 != b.BindingSHA256 {
		return broker.QueryResult{Kind: broker.QueryUnavailable, Reason: "malformed"}, nil
	}
	var out broker.QueryResult
	err = p.read(ctx, func(tx *sql.Tx, st *kvTxState) error {
		ctxDigest, reason, err := p.authenticate(ctx, tx, pres)
		if err != nil || reason != "" {
			out = broker.QueryResult{Kind: broker.QueryUnavailable, Reason: reason}
			return err
		}
		switch {
		case st.reg.retired(b.ProviderEpoch):
			out = broker.QueryResult{Kind: broker.QueryEpochRetired}
			return nil
		case b.ProviderEpoch != st.reg.epoch():
			out = broker.QueryResult{Kind: broker.QueryUnavailable, Reason: "epoch_unknown"}
			return nil
		}
		keys := p.keys(b, ctxDigest)
		found, err := p.lookup(ctx, tx, keys)
		if err != nil {
			return err
		}
		out = found.queryResult(b, keys, st.seq)
		return nil
	})
	if err != nil {
		return broker.QueryResult{Kind: broker.QueryUnavailable, Reason: "store_unavailable"}, err
	}
	return out, nil
}

// Revoke revokes a grant at the provider, in the order of its
// acceptances: every later acceptance under it is rejected (revoked) and
// cites this revocation's order receipt, which Revoke returns. Revoking
// twice returns the first revocation.
func (p *kvProvider) Revoke(ctx context.Context, policySHA256 string) (string, error) {
	if !canonjson.IsDigest(policySHA256) {
		return "", fail(CodeBadArguments)
	}
	var receipt string
	err := p.write(ctx, "revoke", func(tx *sql.Tx, st *kvTxState) error {
		var err error
		if receipt, err = p.orderReceipt(ctx, tx, kvEventRevoked, policySHA256, ""); err != nil || receipt != "" {
			return err
		}
		receipt, err = p.appendOrder(ctx, tx, st, kvEventRevoked, policySHA256, "")
		return err
	})
	return receipt, err
}
