package handlers

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/canonjson"
)

// The provider's own store, in the kv file: principals, the policy order
// (activations, revocations, decisions and epoch retirements in one
// sequence), the identity index (effect and authorization keys, each
// scoped by provider, epoch and security context) and the decision
// receipts. A receipt whose full text is compacted away is a tombstone:
// its digest, binding digest, decision and public projection remain.
const kvAcceptanceSchema = `
CREATE TABLE IF NOT EXISTS apysup_acc_meta (k TEXT PRIMARY KEY, v TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS apysup_acc_principals (
	key_id  TEXT PRIMARY KEY,
	mac_key TEXT NOT NULL,
	tenant  TEXT NOT NULL,
	subject TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS apysup_acc_order (
	seq            INTEGER PRIMARY KEY,
	provider       TEXT NOT NULL,
	epoch          TEXT NOT NULL,
	event          TEXT NOT NULL,
	policy         TEXT NOT NULL,
	context        TEXT NOT NULL,
	receipt_sha256 TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS apysup_acc_order_policy ON apysup_acc_order (provider, event, policy, context);
CREATE TABLE IF NOT EXISTS apysup_acc_identities (
	key            TEXT PRIMARY KEY,
	kind           TEXT NOT NULL,
	provider       TEXT NOT NULL,
	epoch          TEXT NOT NULL,
	receipt_sha256 TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS apysup_acc_receipts (
	receipt_sha256  TEXT PRIMARY KEY,
	provider        TEXT NOT NULL,
	epoch           TEXT NOT NULL,
	binding_sha256  TEXT NOT NULL,
	decided_unix_ns INTEGER NOT NULL,
	projection      TEXT NOT NULL,
	receipt         TEXT,
	result          TEXT
) WITHOUT ROWID;`

// The epoch registry, in its own file: never restored with the store. It
// holds each provider's current and retired epochs and the restore fence
// (the highest order sequence the store is known to have committed).
const kvRegistrySchema = `
CREATE TABLE IF NOT EXISTS apysup_epoch_meta (k TEXT PRIMARY KEY, v TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS apysup_epochs (
	provider          TEXT NOT NULL,
	epoch             INTEGER NOT NULL,
	retired           INTEGER NOT NULL DEFAULT 0,
	retirement_sha256 TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (provider, epoch)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS apysup_epoch_fence (provider TEXT PRIMARY KEY, high_water INTEGER NOT NULL) WITHOUT ROWID;`

// Events of the policy order.
const (
	kvEventActivated    = "activated"     // a policy is issued to a security context (at build)
	kvEventRevoked      = "revoked"       // a policy is revoked
	kvEventDecided      = "decided"       // an acceptance or a trusted denial
	kvEventEpochRetired = "epoch_retired" // an identity epoch is retired
)

// Schemas of the provider's private documents.
const (
	KVDecisionReceiptSchema = "apysup.kv_decision_receipt.v1"
	KVOrderReceiptSchema    = "apysup.kv_order_receipt.v1"
)

// kvReceipt is the provider's full decision receipt: private (it holds
// the whole binding); only its projection leaves the provider.
type kvReceipt struct {
	SchemaVersion            string               `json:"schema_version"`
	Decision                 string               `json:"decision"`
	Reason                   string               `json:"reason,omitempty"`
	PolicyReasonCode         string               `json:"policy_reason_code,omitempty"`
	AuthorizationDisposition string               `json:"authorization_disposition"` // consumed | terminally_denied
	Binding                  broker.EffectBinding `json:"binding"`
	ContextSHA256            string               `json:"context_sha256"`
	ProviderEpoch            string               `json:"provider_epoch"`
	Sequence                 string               `json:"sequence"`
	PolicyOrderReceiptSHA256 string               `json:"policy_order_receipt_sha256"`
	DecidedAt                string               `json:"decided_at"`
	Effect                   string               `json:"effect,omitempty"` // put, unchanged, read
	ResultSHA256             string               `json:"result_sha256,omitempty"`
	ReceiptSHA256            string               `json:"receipt_sha256"`
}

// seal computes the receipt's digest over every other field.
func (r *kvReceipt) seal() {
	r.SchemaVersion = KVDecisionReceiptSchema
	r.ReceiptSHA256 = r.digest()
}

func (r kvReceipt) digest() string {
	r.ReceiptSHA256 = ""
	raw, _ := json.Marshal(r)
	canon, err := canonjson.Canonical(raw)
	if err != nil {
		panic(err) // strings and a struct of strings
	}
	return canonjson.Digest(canonjson.DomainKVDecision, canon)
}

// kvOrderReceipt is the receipt of an order event other than a decision.
type kvOrderReceipt struct {
	SchemaVersion string `json:"schema_version"`
	Event         string `json:"event"`
	ProviderRef   string `json:"provider_ref_sha256"`
	EpochRef      string `json:"epoch_sha256"`
	PolicySHA256  string `json:"policy_sha256,omitempty"`
	ContextSHA256 string `json:"context_sha256,omitempty"`
	Sequence      string `json:"sequence"`
}

func (r kvOrderReceipt) digest() string {
	raw, _ := json.Marshal(r)
	canon, err := canonjson.Canonical(raw)
	if err != nil {
		panic(err)
	}
	return canonjson.Digest(canonjson.DomainKVOrder, canon)
}

// kvRegistryState is what the epoch registry says of one provider.
type kvRegistryState struct {
	id        string
	current   int64
	retiredAt map[string]string // epoch -> retirement receipt
	highWater int64
}

func (r kvRegistryState) epoch() string { return strconv.FormatInt(r.current, 10) }

func (r kvRegistryState) retired(epoch string) bool { _, ok := r.retiredAt[epoch]; return ok }

// kvTxState is one transaction's view: the registry and the store's order.
type kvTxState struct {
	reg   kvRegistryState
	start int64 // the store's highest order sequence when the transaction began
	seq   int64
}

// next takes the next order position.
func (s *kvTxState) next() string {
	s.seq++
	return "uint:" + strconv.FormatInt(s.seq, 10)
}

// kvKeys are a binding's identity keys, scoped by provider, epoch and
// security context.
type kvKeys struct{ effect, authorization string }

func (p *kvProvider) keys(b broker.EffectBinding, ctxDigest string) kvKeys {
	return kvKeys{
		effect:        kvRef("effect", p.providerID, b.ProviderEpoch, ctxDigest, b.EffectID),
		authorization: kvRef("authorization", p.providerID, b.ProviderEpoch, ctxDigest, b.AuthorizationID),
	}
}

// kvPolicyKey names "no grant" in the order.
func kvPolicyKey(policy string) string {
	if policy == "" {
		return "none"
	}
	return policy
}

func unavailable(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return cancelled(err)
	}
	return fail(CodeKVProviderUnavailable)
}

// openRegistry opens (once per path) an epoch registry.
func (b *builder) openRegistry(file string) (*sql.DB, error) {
	db, err := b.openSQLite(file, kvRegistrySchema)
	if err != nil {
		return nil, err
	}
	id := make([]byte, 16)
	rand.Read(id)
	if _, err := db.Exec(`INSERT OR IGNORE INTO apysup_epoch_meta (k, v) VALUES ('registry_id', ?)`, hex.EncodeToString(id)); err != nil {
		return nil, err
	}
	return db, nil
}

// registryState reads the registry's view of the provider.
func (p *kvProvider) registryState(ctx context.Context) (kvRegistryState, error) {
	st := kvRegistryState{retiredAt: map[string]string{}}
	if err := p.registry.QueryRowContext(ctx, `SELECT v FROM apysup_epoch_meta WHERE k = 'registry_id'`).Scan(&st.id); err != nil {
		return st, unavailable(ctx)
	}
	rows, err := p.registry.QueryContext(ctx, `SELECT epoch, retired, retirement_sha256 FROM apysup_epochs WHERE provider = ?`, p.providerID)
	if err != nil {
		return st, unavailable(ctx)
	}
	defer rows.Close()
	for rows.Next() {
		var epoch, retired int64
		var receipt string
		if err := rows.Scan(&epoch, &retired, &receipt); err != nil {
			return st, unavailable(ctx)
		}
		if retired != 0 {
			st.retiredAt[strconv.FormatInt(epoch, 10)] = receipt
		} else if epoch > st.current {
			st.current = epoch
		}
	}
	if rows.Err() != nil {
		return st, unavailable(ctx)
	}
	err = p.registry.QueryRowContext(ctx, `SELECT high_water FROM apysup_epoch_fence WHERE provider = ?`, p.providerID).Scan(&st.highWater)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return st, unavailable(ctx)
	}
	return st, nil
}

// tx runs fn in one BEGIN IMMEDIATE transaction of the store (the
// provider's serialization point) after the restore fence: the store must
// be bound to this registry, under a current epoch, and hold at least the
// order the registry saw committed. A write commits, then raises the
// fence; a read (a linearised query) rolls back.
func (p *kvProvider) tx(ctx context.Context, op string, write bool, fn func(*sql.Tx, *kvTxState) error) error {
	if err := ctx.Err(); err != nil {
		return cancelled(err)
	}
	p.at(op + ".start")
	tx, err := p.db.BeginTx(ctx, nil) // the DSN's _txlock=immediate: BEGIN IMMEDIATE
	if err != nil {
		return unavailable(ctx)
	}
	defer tx.Rollback()
	p.at(op + ".begin")
	st, err := p.fence(ctx, tx)
	if err != nil {
		return err
	}
	if err := fn(tx, st); err != nil {
		return err
	}
	if !write {
		return nil
	}
	if err := tx.Commit(); err != nil {
		return unavailable(ctx)
	}
	p.at(op + ".committed")
	if st.seq > st.start {
		if _, err := p.registry.ExecContext(ctx, `UPDATE apysup_epoch_fence SET high_water = max(high_water, ?) WHERE provider = ?`,
			st.seq, p.providerID); err != nil {
			return unavailable(ctx) // committed; the fence trails by this transaction
		}
	}
	p.at(op + ".fenced")
	return nil
}

func (p *kvProvider) write(ctx context.Context, op string, fn func(*sql.Tx, *kvTxState) error) error {
	return p.tx(ctx, op, true, fn)
}

func (p *kvProvider) read(ctx context.Context, fn func(*sql.Tx, *kvTxState) error) error {
	return p.tx(ctx, "query", false, fn)
}

func (p *kvProvider) fence(ctx context.Context, tx *sql.Tx) (*kvTxState, error) {
	reg, err := p.registryState(ctx)
	if err != nil {
		return nil, err
	}
	var bound string
	var seq int64
	if err := tx.QueryRowContext(ctx, `SELECT v FROM apysup_acc_meta WHERE k = 'registry_id'`).Scan(&bound); err != nil {
		return nil, unavailable(ctx)
	}
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM apysup_acc_order`).Scan(&seq); err != nil {
		return nil, unavailable(ctx)
	}
	if bound != reg.id || reg.current == 0 || seq < reg.highWater {
		return nil, fail(CodeKVProviderUnavailable) // another registry, or a store rolled back behind the fence
	}
	return &kvTxState{reg: reg, start: seq, seq: seq}, nil
}

// authenticate finds the principal of a presentation's key id and checks
// its MAC in constant time; the security context is the principal's, as
// the store registered it. reason is a presentation_rejected reason.
func (p *kvProvider) authenticate(ctx context.Context, tx *sql.Tx, pres kvPresentation) (ctxDigest, reason string, err error) {
	var macKey, tenant, subject string
	err = tx.QueryRowContext(ctx, `SELECT mac_key, tenant, subject FROM apysup_acc_principals WHERE key_id = ?`, pres.KeyID).
		Scan(&macKey, &tenant, &subject)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", "untrusted_issuer", nil
	case err != nil:
		return "", "", unavailable(ctx)
	case !pres.verify([]byte(macKey)):
		return "", "sender_authentication_failed", nil
	}
	return kvContext(tenant, subject, pres.KeyID), "", nil
}

// activated reports whether the policy was issued to the security context.
func (p *kvProvider) activated(ctx context.Context, tx *sql.Tx, policy, ctxDigest string) (bool, error) {
	receipt, err := p.orderReceipt(ctx, tx, kvEventActivated, kvPolicyKey(policy), ctxDigest)
	return receipt != "", err
}

// orderReceipt returns the receipt of the latest order event of a kind for
// a policy (and context), or "".
func (p *kvProvider) orderReceipt(ctx context.Context, tx *sql.Tx, event, policy, ctxDigest string) (string, error) {
	var receipt string
	err := tx.QueryRowContext(ctx, `SELECT receipt_sha256 FROM apysup_acc_order
		WHERE provider = ? AND event = ? AND policy = ? AND context = ? ORDER BY seq DESC LIMIT 1`,
		p.providerID, event, policy, ctxDigest).Scan(&receipt)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", unavailable(ctx)
	}
	return receipt, nil
}

// appendOrder appends a policy event to the order and returns its receipt.
func (p *kvProvider) appendOrder(ctx context.Context, tx *sql.Tx, st *kvTxState, event, policy, ctxDigest string) (string, error) {
	r := kvOrderReceipt{SchemaVersion: KVOrderReceiptSchema, Event: event, ProviderRef: kvRef("provider_ref", p.providerID),
		EpochRef: kvRef("epoch", p.providerID, st.reg.epoch()), PolicySHA256: policy, ContextSHA256: ctxDigest, Sequence: st.next()}
	receipt := r.digest()
	if _, err := tx.ExecContext(ctx, `INSERT INTO apysup_acc_order (seq, provider, epoch, event, policy, context, receipt_sha256)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, st.seq, p.providerID, st.reg.epoch(), event, policy, ctxDigest, receipt); err != nil {
		return "", unavailable(ctx)
	}
	return receipt, nil
}

// record stores a decision: its receipt, its projection and result, the
// identities' pointer to it, and its place in the order.
func (p *kvProvider) record(ctx context.Context, tx *sql.Tx, st *kvTxState, r kvReceipt, proj broker.DecisionProjection,
	result json.RawMessage, keys kvKeys) error {
	receipt, _ := json.Marshal(r)
	projection, _ := json.Marshal(proj)
	var res any
	if result != nil {
		res = string(result)
	}
	decided, _ := time.Parse(time.RFC3339Nano, r.DecidedAt)
	if _, err := tx.ExecContext(ctx, `INSERT INTO apysup_acc_receipts
		(receipt_sha256, provider, epoch, binding_sha256, decided_unix_ns, projection, receipt, result) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ReceiptSHA256, p.providerID, r.ProviderEpoch, r.Binding.BindingSHA256, decided.UnixNano(), string(projection), string(receipt), res); err != nil {
		return unavailable(ctx)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE apysup_acc_identities SET receipt_sha256 = ? WHERE key IN (?, ?)`,
		r.ReceiptSHA256, keys.effect, keys.authorization); err != nil {
		return unavailable(ctx)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO apysup_acc_order (seq, provider, epoch, event, policy, context, receipt_sha256)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, st.seq, p.providerID, r.ProviderEpoch, kvEventDecided,
		kvPolicyKey(r.Binding.PolicySHA256), r.ContextSHA256, r.ReceiptSHA256); err != nil {
		return unavailable(ctx)
	}
	return nil
}

// projection is the public projection of a receipt: digests only.
func (p *kvProvider) projection(r kvReceipt, keys kvKeys) broker.DecisionProjection {
	return broker.DecisionProjection{
		SchemaVersion:            broker.DecisionProjectionSchema,
		ProviderRefSHA256:        kvRef("provider_ref", p.providerID),
		EpochSHA256:              kvRef("epoch", p.providerID, r.ProviderEpoch),
		EffectIDSHA256:           keys.effect,
		AuthorizationIDSHA256:    keys.authorization,
		BindingSHA256:            r.Binding.BindingSHA256,
		Decision:                 r.Decision,
		Reason:                   r.Reason,
		Sequence:                 r.Sequence,
		PolicyOrderReceiptSHA256: r.PolicyOrderReceiptSHA256,
		ReceiptSHA256:            r.ReceiptSHA256,
	}
}

// Kinds of a lookup of a binding's identities.
const (
	kvAbsent = iota
	kvFound
	kvTombstone
	kvConflict
)

type kvFoundDecision struct {
	kind       int
	reason     string // conflict
	stored     kvStored
	identities int64 // absent: the order position of the read
}

// lookup reads both identity keys and the decision they point to.
func (p *kvProvider) lookup(ctx context.Context, tx *sql.Tx, keys kvKeys) (kvFoundDecision, error) {
	pointer := func(key string) (string, error) {
		var receipt string
		err := tx.QueryRowContext(ctx, `SELECT receipt_sha256 FROM apysup_acc_identities WHERE key = ?`, key).Scan(&receipt)
		if errors.Is(err, sql.ErrNoRows) {
			return "", nil
		}
		if err != nil || receipt == "" { // a reservation without a receipt never commits
			return "", unavailable(ctx)
		}
		return receipt, nil
	}
	e, err := pointer(keys.effect)
	if err != nil {
		return kvFoundDecision{}, err
	}
	a, err := pointer(keys.authorization)
	if err != nil {
		return kvFoundDecision{}, err
	}
	switch {
	case e == "" && a == "":
		return kvFoundDecision{kind: kvAbsent}, nil
	case e != a && e != "":
		return kvFoundDecision{kind: kvConflict, reason: "effect_identity_reused"}, nil
	case e != a:
		return kvFoundDecision{kind: kvConflict, reason: "authorization_identity_reused"}, nil
	}
	var binding, projection string
	var receipt, result sql.NullString
	if err := tx.QueryRowContext(ctx, `SELECT binding_sha256, projection, receipt, result FROM apysup_acc_receipts WHERE receipt_sha256 = ?`, e).
		Scan(&binding, &projection, &receipt, &result); err != nil {
		return kvFoundDecision{}, unavailable(ctx)
	}
	stored, err := parseKVStored(binding, projection, receipt, result)
	if err != nil || stored.projection.ReceiptSHA256 != e {
		return kvFoundDecision{}, fail(CodeKVProviderUnavailable) // a store row that does not read back
	}
	if !receipt.Valid {
		return kvFoundDecision{kind: kvTombstone, stored: stored}, nil
	}
	return kvFoundDecision{kind: kvFound, stored: stored}, nil
}

// acceptResult answers an Accept whose identities are known.
func (f kvFoundDecision) acceptResult(b broker.EffectBinding) broker.AcceptResult {
	if f.kind == kvConflict {
		return broker.AcceptResult{Kind: broker.AcceptConflict, Reason: f.reason}
	}
	if f.stored.binding != b.BindingSHA256 {
		return broker.AcceptResult{Kind: broker.AcceptConflict, Reason: "effect_identity_reused"}
	}
	proj := f.stored.projection
	res := broker.AcceptResult{Kind: broker.AcceptTerminal, Replay: true, Projection: &proj, Result: f.stored.result}
	if f.kind == kvTombstone {
		res.Reason = "compacted" // the decision stands; its result is no longer kept
	}
	return res
}

// queryResult answers a Query from a linearised lookup.
func (f kvFoundDecision) queryResult(b broker.EffectBinding, keys kvKeys, seq int64) broker.QueryResult {
	switch {
	case f.kind == kvAbsent:
		doc, _ := json.Marshal(map[string]string{"authorization_key": keys.authorization, "binding_sha256": b.BindingSHA256,
			"effect_key": keys.effect, "epoch": b.ProviderEpoch, "observed_sequence": "uint:" + strconv.FormatInt(seq, 10)})
		return broker.QueryResult{Kind: broker.QueryAbsent, AbsenceSHA256: canonjson.Digest(canonjson.DomainKVAbsence, doc)}
	case f.kind == kvConflict || f.stored.binding != b.BindingSHA256:
		return broker.QueryResult{Kind: broker.QueryUnavailable, Reason: "identity_conflict"}
	}
	proj := f.stored.projection
	if f.kind == kvTombstone {
		return broker.QueryResult{Kind: broker.QueryTombstone, Projection: &proj}
	}
	return broker.QueryResult{Kind: broker.QueryFound, Projection: &proj, Result: f.stored.result}
}

// kvStored is a decision read back from the store.
type kvStored struct {
	binding    string
	projection broker.DecisionProjection
	receipt    *kvReceipt // nil for a tombstone
	result     json.RawMessage
}

// parseKVStored reads a stored decision strictly: the store is a file
// anyone with its path can change, so every row is checked again (the
// projection's fields, the receipt's own digest, the result's JSON).
func parseKVStored(binding, projection string, receipt, result sql.NullString) (kvStored, error) {
	bad := errors.New("handlers: kv: stored decision does not read back")
	s := kvStored{binding: binding}
	if canonjson.DecodeStrict([]byte(projection), canonjson.MaxGuestBytes, &s.projection) != nil {
		return kvStored{}, bad
	}
	pj := s.projection
	for _, d := range []string{binding, pj.ProviderRefSHA256, pj.EpochSHA256, pj.EffectIDSHA256, pj.AuthorizationIDSHA256,
		pj.BindingSHA256, pj.PolicyOrderReceiptSHA256, pj.ReceiptSHA256} {
		if !canonjson.IsDigest(d) {
			return kvStored{}, bad
		}
	}
	if pj.SchemaVersion != broker.DecisionProjectionSchema || pj.BindingSHA256 != binding || !validKVSequence(pj.Sequence) ||
		!validKVDecision(pj.Decision, pj.Reason) {
		return kvStored{}, bad
	}
	if receipt.Valid {
		var r kvReceipt
		if canonjson.DecodeStrict([]byte(receipt.String), canonjson.MaxGuestBytes, &r) != nil || r.SchemaVersion != KVDecisionReceiptSchema ||
			r.digest() != r.ReceiptSHA256 || r.ReceiptSHA256 != pj.ReceiptSHA256 || r.Decision != pj.Decision ||
			r.Binding.BindingSHA256 != binding || !r.Binding.Verify() {
			return kvStored{}, bad
		}
		s.receipt = &r
	}
	if result.Valid {
		if !receipt.Valid || pj.Decision == broker.DecisionRejected {
			return kvStored{}, bad
		}
		if _, err := canonjson.CanonicalValidated(json.RawMessage(result.String)); err != nil ||
			canonjson.PlainDigest([]byte(result.String)) != s.receipt.ResultSHA256 {
			return kvStored{}, bad
		}
		s.result = json.RawMessage(result.String)
	} else if receipt.Valid && pj.Decision != broker.DecisionRejected {
		return kvStored{}, bad
	}
	return s, nil
}

func validKVSequence(s string) bool {
	n, ok := parseSeqDigits(s)
	return ok && n > 0
}

func parseSeqDigits(s string) (int64, bool) {
	digits, ok := strings.CutPrefix(s, "uint:")
	if !ok || digits == "" || len(digits) > 18 || (digits[0] == '0' && len(digits) > 1) {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	return n, err == nil
}

func validKVDecision(decision, reason string) bool {
	switch decision {
	case broker.DecisionCommitted, broker.DecisionNoChange:
		return reason == ""
	case broker.DecisionRejected:
		return reason == "revoked" || reason == "policy_denied"
	}
	return false
}

// setup binds the store to the epoch registry (a store with history and
// no registry, or another registry, is refused), enrolls the handler's
// credential for its principal on first use (a key id enrolled for
// another principal is refused) and issues the policies of the
// capabilities it serves to that principal's security context.
func (p *kvProvider) setup(ctx context.Context) error {
	if _, err := p.db.ExecContext(ctx, kvAcceptanceSchema); err != nil {
		return err
	}
	reg, err := p.registryState(ctx)
	if err != nil {
		return err
	}
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var bound string
	var history int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE((SELECT v FROM apysup_acc_meta WHERE k = 'registry_id'), '')`).Scan(&bound); err != nil {
		return err
	}
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM apysup_acc_order WHERE provider = ?`, p.providerID).Scan(&history); err != nil {
		return err
	}
	switch {
	case bound == "" && history > 0, bound != "" && bound != reg.id:
		return errors.New("handlers: kv: the store is bound to another epoch registry")
	case reg.current == 0 && len(reg.retiredAt) == 0 && history > 0:
		return errors.New("handlers: kv: the store has history and the epoch registry does not know it")
	}
	if bound == "" {
		if _, err := tx.ExecContext(ctx, `INSERT INTO apysup_acc_meta (k, v) VALUES ('registry_id', ?)`, reg.id); err != nil {
			return err
		}
	}
	if reg.current == 0 && len(reg.retiredAt) == 0 {
		if _, err := p.registry.ExecContext(ctx, `INSERT OR IGNORE INTO apysup_epochs (provider, epoch) VALUES (?, 1)`, p.providerID); err != nil {
			return err
		}
		if _, err := p.registry.ExecContext(ctx, `INSERT OR IGNORE INTO apysup_epoch_fence (provider, high_water) VALUES (?, 0)`, p.providerID); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if p.enrolled(ctx) {
		return nil // nothing to write: a store restored behind the fence still opens (and answers unavailable)
	}
	return p.write(ctx, "setup", func(tx *sql.Tx, st *kvTxState) error {
		var macKey, tenant, subject string
		err := tx.QueryRowContext(ctx, `SELECT mac_key, tenant, subject FROM apysup_acc_principals WHERE key_id = ?`, p.cred.keyID).
			Scan(&macKey, &tenant, &subject)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if _, err := tx.ExecContext(ctx, `INSERT INTO apysup_acc_principals (key_id, mac_key, tenant, subject) VALUES (?, ?, ?, ?)`,
				p.cred.keyID, string(p.cred.macKey), p.cfg.tenant, p.cfg.subject); err != nil {
				return err
			}
		case err != nil:
			return err
		case macKey != string(p.cred.macKey) || tenant != p.cfg.tenant || subject != p.cfg.subject:
			return errors.New("handlers: kv: the credential is enrolled for another principal")
		}
		ctxDigest := kvContext(p.cfg.tenant, p.cfg.subject, p.cred.keyID)
		for _, kc := range p.caps {
			if ok, err := p.activated(ctx, tx, kc.policy, ctxDigest); err != nil || ok {
				if err != nil {
					return err
				}
				continue
			}
			if _, err := p.appendOrder(ctx, tx, st, kvEventActivated, kvPolicyKey(kc.policy), ctxDigest); err != nil {
				return err
			}
		}
		return nil
	})
}

// enrolled reports whether the credential is enrolled for the handler's
// principal and every policy it serves is issued to it.
func (p *kvProvider) enrolled(ctx context.Context) bool {
	var n int
	err := p.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM apysup_acc_principals WHERE key_id = ? AND mac_key = ? AND tenant = ? AND subject = ?`,
		p.cred.keyID, string(p.cred.macKey), p.cfg.tenant, p.cfg.subject).Scan(&n)
	if err != nil || n != 1 {
		return false
	}
	ctxDigest := kvContext(p.cfg.tenant, p.cfg.subject, p.cred.keyID)
	for _, kc := range p.caps {
		err := p.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM apysup_acc_order WHERE provider = ? AND event = ? AND policy = ? AND context = ?`,
			p.providerID, kvEventActivated, kvPolicyKey(kc.policy), ctxDigest).Scan(&n)
		if err != nil || n == 0 {
			return false
		}
	}
	return true
}

// Compact turns every decision receipt older than the retention into a
// tombstone (its full receipt and result are dropped; the identities, the
// binding digest, the decision and the projection stay, and still refuse
// a new effect). It returns how many it compacted.
func (p *kvProvider) Compact(ctx context.Context) (int, error) {
	var n int64
	err := p.write(ctx, "compact", func(tx *sql.Tx, st *kvTxState) error {
		cutoff := p.now().Add(-p.cfg.retention).UnixNano()
		res, err := tx.ExecContext(ctx, `UPDATE apysup_acc_receipts SET receipt = NULL, result = NULL
			WHERE provider = ? AND receipt IS NOT NULL AND decided_unix_ns <= ?`, p.providerID, cutoff)
		if err != nil {
			return unavailable(ctx)
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return int(n), err
}

// RetireEpoch retires the current identity epoch in the registry first,
// then deletes the store's identities, receipts and tombstones of every
// retired epoch; requests under a retired epoch are refused
// (epoch_rejected) and their queries answer epoch_retired, never absent.
// It is also the way back after a restore: the fence is reset to the
// store as it is, under a new epoch. It returns the new epoch.
func (p *kvProvider) RetireEpoch(ctx context.Context) (string, error) {
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return "", unavailable(ctx)
	}
	defer tx.Rollback()
	p.at("retire.begin")
	reg, err := p.registryState(ctx)
	if err != nil {
		return "", err
	}
	var bound string
	var seq int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE((SELECT v FROM apysup_acc_meta WHERE k = 'registry_id'), '')`).Scan(&bound); err != nil {
		return "", unavailable(ctx)
	}
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM apysup_acc_order`).Scan(&seq); err != nil {
		return "", unavailable(ctx)
	}
	if bound != reg.id || reg.current == 0 {
		return "", fail(CodeKVProviderUnavailable)
	}
	st := &kvTxState{reg: reg, start: seq, seq: seq}
	retirement := kvOrderReceipt{SchemaVersion: KVOrderReceiptSchema, Event: kvEventEpochRetired, ProviderRef: kvRef("provider_ref", p.providerID),
		EpochRef: kvRef("epoch", p.providerID, reg.epoch()), Sequence: st.next()}.digest()
	next := reg.current + 1
	rtx, err := p.registry.BeginTx(ctx, nil)
	if err != nil {
		return "", unavailable(ctx)
	}
	defer rtx.Rollback()
	for _, stmt := range []struct {
		q    string
		args []any
	}{
		{`UPDATE apysup_epochs SET retired = 1, retirement_sha256 = ? WHERE provider = ? AND epoch = ?`, []any{retirement, p.providerID, reg.current}},
		{`INSERT INTO apysup_epochs (provider, epoch) VALUES (?, ?)`, []any{p.providerID, next}},
		{`UPDATE apysup_epoch_fence SET high_water = ? WHERE provider = ?`, []any{seq, p.providerID}},
	} {
		if _, err := rtx.ExecContext(ctx, stmt.q, stmt.args...); err != nil {
			return "", unavailable(ctx)
		}
	}
	if err := rtx.Commit(); err != nil {
		return "", unavailable(ctx)
	}
	p.at("retire.registered")
	newEpoch := strconv.FormatInt(next, 10)
	for _, q := range []string{`DELETE FROM apysup_acc_identities WHERE provider = ? AND epoch != ?`,
		`DELETE FROM apysup_acc_receipts WHERE provider = ? AND epoch != ?`} {
		if _, err := tx.ExecContext(ctx, q, p.providerID, newEpoch); err != nil {
			return "", unavailable(ctx)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO apysup_acc_order (seq, provider, epoch, event, policy, context, receipt_sha256)
		VALUES (?, ?, ?, ?, '', '', ?)`, st.seq, p.providerID, reg.epoch(), kvEventEpochRetired, retirement); err != nil {
		return "", unavailable(ctx)
	}
	if err := tx.Commit(); err != nil {
		return "", unavailable(ctx)
	}
	p.at("retire.committed")
	if _, err := p.registry.ExecContext(ctx, `UPDATE apysup_epoch_fence SET high_water = max(high_water, ?) WHERE provider = ?`,
		st.seq, p.providerID); err != nil {
		return "", unavailable(ctx)
	}
	return newEpoch, nil
}
