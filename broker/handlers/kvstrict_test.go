package handlers

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/acceptance/conformance"
	"github.com/apysup/apysup/internal/canonjson"
)

// openKVProvider builds Alice's strict provider of a conformance harness
// in this process.
func openKVProvider(t *testing.T, h *kvHarness, as conformance.Principal) *kvProvider {
	t.Helper()
	m, err := loadKVFixture(h.manifests[as])
	if err != nil {
		t.Fatal(err)
	}
	b := newBuilder(Options{}, false)
	t.Cleanup(func() { b.Close() })
	b.build(m)
	if len(b.problems) > 0 {
		t.Fatal(b.problems)
	}
	return b.providers[0].p
}

// TestKVStrictPresentationRefusedBeforeReservation: a malformed,
// unknown-key or forged presentation is refused, and reserves nothing:
// the same binding then commits.
func TestKVStrictPresentationRefusedBeforeReservation(t *testing.T) {
	h := newKVHarness(t, false)
	p := openKVProvider(t, h, conformance.Alice)
	ctx := context.Background()
	args := h.Args("k", `"v"`)
	b := sealedBinding(t, h, p, args)
	other := kvCredentialOf([]byte(strings.Repeat("z", 40)))
	forged := p.cred
	forged.macKey = other.macKey
	for name, c := range map[string]struct {
		raw    []byte
		reason string
	}{
		"malformed":    {[]byte(`{"schema_version":"x"}`), "malformed"},
		"unknown key":  {other.present(b.BindingSHA256), "untrusted_issuer"},
		"forged mac":   {forged.present(b.BindingSHA256), "sender_authentication_failed"},
		"other digest": {p.cred.present(planDigestForTest), "binding_mismatch"},
	} {
		r, err := p.accept(ctx, c.raw, b, args)
		if err != nil || r.Kind != broker.AcceptPresentationRejected || r.Reason != c.reason {
			t.Errorf("%s: %+v %v, want presentation_rejected %s", name, r, err, c.reason)
		}
	}
	if _, found := h.Observe(t, "k"); found {
		t.Fatal("a refused presentation applied the effect")
	}
	if r, err := p.Accept(ctx, b, args); err != nil || r.Kind != broker.AcceptTerminal || r.Replay {
		t.Fatalf("the binding after refused presentations: %+v %v", r, err)
	}
}

// sealedBinding is Alice's binding of call capability-1 of run-1 with args.
func sealedBinding(t *testing.T, h *kvHarness, p broker.Provider, args json.RawMessage) broker.EffectBinding {
	b := h.Base(t, conformance.Alice)
	canon, _ := canonjson.Canonical(args)
	b.RunID, b.PlanSHA256, b.CallID = "run-1", planDigestForTest, "capability-1"
	b.RequestSHA256 = broker.RequestDigest(b.CallID, b.Capability, canon)
	prof := p.Profile()
	b.ProviderID, b.ProviderEpoch = prof.ProviderID, prof.Epoch
	return b.Seal()
}

const planDigestForTest = "sha256:5d41402abc4b2a76b9719d911017c592aa9b1c6c2d8e0d1f4e3a2b1c0d9e8f70"

// TestKVStrictCredentialEnrolledOnce: a credential enrolled for one
// principal cannot be presented as another (the config cannot move it).
func TestKVStrictCredentialEnrolledOnce(t *testing.T) {
	h := newKVHarness(t, false)
	openKVProvider(t, h, conformance.Alice)
	raw, _ := os.ReadFile(h.manifests[conformance.Alice])
	var f kvFixture
	json.Unmarshal(raw, &f)
	var cfg map[string]any
	json.Unmarshal(f.Config, &cfg)
	cfg["tenant"] = "tenant-b"
	f.Config, _ = json.Marshal(cfg)
	raw, _ = json.Marshal(f)
	file := filepath.Join(h.dir, "moved.json")
	os.WriteFile(file, raw, 0o600)
	m, _ := loadKVFixture(file)
	if _, _, err := Build(m, Options{}); !problemAt(err, CodeHandlerSetup, "capabilities[0].handler.config") {
		t.Fatalf("build with the credential under another tenant: %v", err)
	}
}

// TestKVStrictConfig: strict fields need acceptance strict, strict needs
// a capability that is not off, and the credential must be private.
func TestKVStrictConfig(t *testing.T) {
	dir := t.TempDir()
	cred := filepath.Join(dir, "cred")
	os.WriteFile(cred, []byte(strings.Repeat("s", 40)), 0o644)
	store, epochs := filepath.Join(dir, "s.db"), filepath.Join(dir, "e.db")
	strict := `{"path":"` + store + `","op":"put","acceptance":"strict","credential_file":"` + cred + `","epoch_file":"` + epochs + `","tenant":"t","subject":"s"}`
	_, err := build(t, Options{}, capability{name: "n.put", kind: KindKV, effect: "write", config: strict})
	if !problemAt(err, CodeHandlerMismatch, "capabilities[0].handler.config.acceptance") {
		t.Errorf("strict handler, capability off: %v", err)
	}
	_, err = build(t, Options{}, capability{name: "n.put", kind: KindKV, effect: "write",
		config: `{"path":"` + store + `","op":"put","tenant":"t"}`})
	if !problemAt(err, CodeInvalidConfig, "capabilities[0].handler.config.tenant") {
		t.Errorf("strict field without strict: %v", err)
	}
	_, err = build(t, Options{}, capability{name: "n.put", kind: KindKV, effect: "write",
		config: `{"path":"` + store + `","op":"put","acceptance":"strict","credential_file":"` + cred + `","epoch_file":"` + store + `","tenant":"t","subject":"s"}`})
	if !problemAt(err, CodeInvalidConfig, "capabilities[0].handler.config.epoch_file") {
		t.Errorf("registry in the store: %v", err)
	}
	if _, err := readKVCredential(cred); err == nil {
		t.Error("a credential readable by others was accepted")
	}
}

func FuzzKVPresentation(f *testing.F) {
	c := kvCredentialOf([]byte(strings.Repeat("k", 32)))
	if p, err := parseKVPresentation(c.present(planDigestForTest)); err != nil || !p.verify(c.macKey) {
		f.Fatalf("the seed presentation does not verify: %v", err)
	}
	f.Add(c.present(planDigestForTest))
	f.Add([]byte(`{"schema_version":"apysup.kv_presentation.v1","key_id":"","binding_sha256":"","mac":""}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := parseKVPresentation(raw)
		if err != nil {
			return
		}
		if !canonjson.IsDigest(p.KeyID) || !canonjson.IsDigest(p.BindingSHA256) || len(p.MAC) != 64 {
			t.Fatalf("accepted %q", raw)
		}
		want, _ := parseKVPresentation(c.present(p.BindingSHA256))
		if p.verify(c.macKey) != (p.MAC == want.MAC) {
			t.Fatalf("verify disagrees with the credential's own MAC: %q", raw)
		}
	})
}

func FuzzKVStoredDecision(f *testing.F) {
	b := broker.EffectBinding{RunID: "r", PlanSHA256: planDigestForTest, CallID: "capability-1", Capability: "notes.put",
		RequestSHA256: planDigestForTest, Acceptance: "strict"}.Seal()
	result := `{"key":"n/k","stored":true}`
	r := kvReceipt{Decision: broker.DecisionCommitted, AuthorizationDisposition: "consumed", Binding: b, ContextSHA256: planDigestForTest,
		ProviderEpoch: "1", Sequence: "uint:2", PolicyOrderReceiptSHA256: planDigestForTest, DecidedAt: "2026-01-01T00:00:00Z",
		Effect: "put", ResultSHA256: canonjson.PlainDigest([]byte(result))}
	r.seal()
	p := (&kvProvider{providerID: planDigestForTest}).projection(r, kvKeys{effect: planDigestForTest, authorization: planDigestForTest})
	receipt, _ := json.Marshal(r)
	projection, _ := json.Marshal(p)
	if _, err := parseKVStored(b.BindingSHA256, string(projection), sql.NullString{String: string(receipt), Valid: true},
		sql.NullString{String: result, Valid: true}); err != nil {
		f.Fatalf("the seed decision does not read back: %v", err)
	}
	f.Add(b.BindingSHA256, string(projection), string(receipt), true, result, true)
	f.Add(b.BindingSHA256, string(projection), "", false, "", false) // a tombstone
	f.Add("sha256:"+strings.Repeat("a", 64), `{}`, "", false, "", false)
	f.Fuzz(func(t *testing.T, binding, projection, receipt string, hasReceipt bool, result string, hasResult bool) {
		s, err := parseKVStored(binding, projection, sql.NullString{String: receipt, Valid: hasReceipt}, sql.NullString{String: result, Valid: hasResult})
		if err != nil {
			return
		}
		if !canonjson.IsDigest(s.projection.ReceiptSHA256) || s.projection.BindingSHA256 != binding ||
			(s.receipt != nil && s.receipt.digest() != s.projection.ReceiptSHA256) || (s.result != nil && s.receipt == nil) {
			t.Fatalf("read back an inconsistent decision: %+v", s)
		}
	})
}

// TestKVStrictDocPrivate: the strict kv doc shows no local path of this
// machine, no home directory and no credential.
func TestKVStrictDocPrivate(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "acceptance.md"))
	if err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	wd, _ := os.Getwd()
	for _, s := range []string{os.TempDir() + "/", "/home/", home, wd, "conformance-secret"} {
		if s != "" && s != "/" && strings.Contains(string(doc), s) {
			t.Errorf("docs/acceptance.md shows %q", s)
		}
	}
}

// TestKVStrictCheckedAndCalled: the seal-time Checker accepts a strict
// kv capability and sees a provider with every guarantee, without
// creating anything; Call without the Broker's binding is refused.
func TestKVStrictCheckedAndCalled(t *testing.T) {
	h := newKVHarness(t, false)
	m, err := loadKVFixture(h.manifests[conformance.Alice])
	if err != nil {
		t.Fatal(err)
	}
	if err := (Checker{}).CheckHandlers(m); err != nil {
		t.Fatalf("checker: %v", err)
	}
	b := newBuilder(Options{}, true)
	b.build(m)
	if len(b.problems) > 0 || len(b.dbs) != 0 {
		t.Fatalf("check-only build: %v, %d databases opened", b.problems, len(b.dbs))
	}
	if _, err := os.Stat(h.store); err == nil {
		t.Fatal("the checker created the store")
	}
	p := openKVProvider(t, h, conformance.Alice)
	var _ broker.Provider = p
	var _ broker.Revoker = p
	if m := p.Profile().Missing(); len(m) != 0 {
		t.Fatalf("missing %v", m)
	}
	if _, err := p.Call(context.Background(), h.Args("k", `"v"`)); CodeOf(err) != CodeKVAcceptanceRequired {
		t.Fatalf("call without a binding: %v", err)
	}
}

// TestKVStrictRegistryLost: a store with history and a new epoch registry
// (the old one lost) is refused at build: the fence cannot be proved.
func TestKVStrictRegistryLost(t *testing.T) {
	h := newKVHarness(t, false)
	p := h.Provider(t, conformance.Alice, conformance.Control{})
	args := h.Args("k", `"v"`)
	if r, err := p.Accept(context.Background(), sealedBinding(t, h, p, args), args); err != nil || r.Kind != broker.AcceptTerminal {
		t.Fatalf("accept: %+v %v", r, err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(h.registry + suffix)
	}
	m, err := loadKVFixture(h.manifests[conformance.Alice])
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Build(m, Options{}); !problemAt(err, CodeHandlerSetup, "capabilities[0].handler.config") {
		t.Fatalf("build with a lost registry: %v", err)
	}
}
