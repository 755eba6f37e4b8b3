package handlers

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/internal/testenv"
	"github.com/apysup/apysup/plan"
)

const hostPython = "/usr/bin/python3.11"

var updateVectors = flag.Bool("update-vectors", false, "rewrite examples/provider/testdata/binding_vectors.json")

const vectorsFile = "../../examples/provider/testdata/binding_vectors.json"

// bindingVector is one golden vector shared by this test and the example
// tool (notes_provider.py vectors): the arguments, the binding's fields and
// the identities EffectBinding.Seal gives them.
type bindingVector struct {
	Name                string               `json:"name"`
	Arguments           json.RawMessage      `json:"arguments"`
	CanonicalArguments  string               `json:"canonical_arguments"`
	Binding             broker.EffectBinding `json:"binding"` // without request digest and identities
	RequestSHA256       string               `json:"request_sha256"`
	EffectID            string               `json:"effect_id"`
	AuthorizationID     string               `json:"authorization_id"`
	BindingSHA256       string               `json:"binding_sha256"`
	CanonicalBindingDoc string               `json:"canonical_binding_document"` // what binding_sha256 digests
}

func vectorInputs() []bindingVector {
	handler := plan.HandlerIdentity{Kind: "exec", ID: "notes", Version: "1", ConfigSHA256: canonjson.PlainDigest([]byte(`{}`))}
	base := broker.EffectBinding{RunID: "run-1", PlanSHA256: canonjson.PlainDigest([]byte("plan")), CallID: "capability-1",
		Capability: "notes.publish", Handler: handler, Acceptance: plan.AcceptanceStrict}
	with := func(f func(*broker.EffectBinding)) broker.EffectBinding { b := base; f(&b); return b }
	return []bindingVector{
		{Name: "minimal: no grant, no approval, no provider", Binding: base, Arguments: json.RawMessage(`{"title":"t","body":""}`)},
		{Name: "every field", Arguments: json.RawMessage(`{"body":"hello","title":"greeting"}`), Binding: with(func(b *broker.EffectBinding) {
			b.PolicySHA256, b.ApprovalRequestID = canonjson.PlainDigest([]byte("policy")), "apr-7"
			b.ProviderID, b.ProviderEpoch = "notes", "e1"
		})},
		{Name: "keyed run, programmatic call, acceptance off", Arguments: json.RawMessage(`{"a":{"z":[1,2,{"y":null,"x":true}]},"A":false}`),
			Binding: with(func(b *broker.EffectBinding) {
				b.RunID, b.CallID, b.Acceptance = "keyed-"+strings.Repeat("ab", 16), "capability-3:program:12", plan.AcceptanceOff
				b.ProviderID, b.ProviderEpoch = "notes", "2026-12-01.a"
			})},
		{Name: "numbers", Arguments: json.RawMessage(`{"n":[0,-0,1.0,-12.50,1E21,1e20,123456789012345678901234,1e-7,0.000001,5e-324,1.7976931348623157e308,0.1,9007199254740993]}`),
			Binding: with(func(b *broker.EffectBinding) { b.ProviderID, b.ProviderEpoch = "notes", "e1" })},
		{Name: "strings and key order", Arguments: json.RawMessage(`{"\u00e9":1,"\ud83d\ude00":2,"\uff61":3,"b":"tab\there \"q\" \\ \u0001 \u001f \u007f \u2028 <>&","a":"é"}`),
			Binding: with(func(b *broker.EffectBinding) {
				b.Capability, b.PolicySHA256 = "notes.publish<&>", canonjson.PlainDigest([]byte("p2"))
				b.ProviderID, b.ProviderEpoch = "notes", "e1"
			})},
	}
}

// TestProviderBindingVectors: the golden vectors hold what Go computes
// today (Seal, RequestDigest, canonical arguments), and the Python example
// tool recomputes every one of them.
func TestProviderBindingVectors(t *testing.T) {
	var got []bindingVector
	for _, v := range vectorInputs() {
		canon, err := canonjson.Canonical(v.Arguments)
		if err != nil {
			t.Fatal(err)
		}
		b := v.Binding
		b.RequestSHA256 = broker.RequestDigest(b.CallID, b.Capability, canon)
		sealed := b.Seal()
		doc := sealed
		doc.BindingSHA256 = ""
		docCanon := canonjson.MustMarshal(doc)
		if canonjson.Digest(canonjson.DomainEffectBinding, docCanon) != sealed.BindingSHA256 {
			t.Fatalf("%s: the documented binding recomputation differs from Seal", v.Name)
		}
		v.CanonicalArguments, v.RequestSHA256 = string(canon), b.RequestSHA256
		v.EffectID, v.AuthorizationID, v.BindingSHA256 = sealed.EffectID, sealed.AuthorizationID, sealed.BindingSHA256
		v.CanonicalBindingDoc = string(docCanon)
		got = append(got, v)
	}
	if *updateVectors {
		raw, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(vectorsFile, append(raw, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(vectorsFile)
	if err != nil {
		t.Fatal(err)
	}
	var want []bindingVector
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(got) {
		t.Fatalf("%d vectors on file, %d computed (go test -run TestProviderBindingVectors -update-vectors)", len(want), len(got))
	}
	for i := range got {
		w, g := want[i], got[i]
		if w.CanonicalArguments != g.CanonicalArguments || w.RequestSHA256 != g.RequestSHA256 || w.EffectID != g.EffectID ||
			w.AuthorizationID != g.AuthorizationID || w.BindingSHA256 != g.BindingSHA256 || w.CanonicalBindingDoc != g.CanonicalBindingDoc {
			t.Errorf("vector %q: the binding's identities changed; a provider recomputing them would reject every call", g.Name)
		}
	}

	needPython(t)
	out, err := exec.Command(hostPython, "-I", notesTool(t), "vectors", vectorsFile).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte(fmt.Sprintf(`{"checked":%d,"failed":[]}`, len(got)))) {
		t.Fatalf("the example tool's recomputation: %v\n%s", err, out)
	}
}

func needPython(t testing.TB) {
	t.Helper()
	_, err := os.Stat(hostPython)
	testenv.Need(t, err == nil, hostPython+" (make deps)")
}

func notesTool(t testing.TB) string {
	p, err := filepath.Abs("../../examples/provider/notes_provider.py")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// notesStore is one store of the example tool: its SQLite file and its
// epoch registry.
type notesStore struct {
	dir, db, epochs, key string
}

func newNotesStore(t *testing.T) *notesStore {
	t.Helper()
	needPython(t)
	dir := t.TempDir()
	s := &notesStore{dir: dir, db: filepath.Join(dir, "notes.db"), epochs: filepath.Join(dir, "epochs.json")}
	s.tool(t, "init", "--provider-id", "notes", "--epoch", "e1", "--retention-seconds", "3600")
	s.key = s.issue(t, "tenant-a", testPolicy)
	return s
}

// issue has the store issue a credential for a tenant's grants and
// returns the path of its key file.
func (s *notesStore) issue(t *testing.T, tenant string, policies ...string) string {
	t.Helper()
	key := filepath.Join(t.TempDir(), "key")
	args := []string{"--tenant", tenant, "--subject", "apysup-host", "--key-file", key}
	for _, p := range policies {
		args = append(args, "--policy", p)
	}
	s.tool(t, "issue", args...)
	return key
}

// tool runs one of the example tool's operator commands on the store.
func (s *notesStore) tool(t *testing.T, cmd string, args ...string) string {
	t.Helper()
	argv := append([]string{"-I", notesTool(t), cmd, "--db", s.db, "--epoch-file", s.epochs}, args...)
	out, err := exec.Command(hostPython, argv...).CombinedOutput()
	if err != nil {
		t.Fatalf("notes_provider %s: %v\n%s", cmd, err, out)
	}
	return string(out)
}

// count returns the number of rows of a table of the store.
func (s *notesStore) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+s.db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

var allGuarantees = `["exact_binding","single_use","exact_replay","atomic_commit","revocation_ordering","query_absence","retention_tombstones","epoch_fence"]`

// config is the handler config of the tool serving s with the store's
// credential; wrap, when set, is a shell script run with the tool's argv
// as its arguments.
func (s *notesStore) config(t *testing.T, providerID, wrap string) string {
	return s.configWith(t, providerID, wrap, s.key)
}

func (s *notesStore) configWith(t *testing.T, providerID, wrap, key string) string {
	argv := []string{hostPython, "-I", notesTool(t), "serve", "--db", s.db, "--epoch-file", s.epochs}
	if wrap != "" {
		argv = append([]string{"/bin/sh", "-c", wrap, "sh"}, argv...)
	}
	raw, _ := json.Marshal(argv)
	credential := ""
	if key != "" {
		credential = `,"credential_file":"` + key + `"`
	}
	return `{"argv":` + string(raw) + `,"timeout":"60s","env":{"NOTES_PROVIDER_NOW":"1000"},` +
		`"provider":{"id":"` + providerID + `","guarantees":` + allGuarantees + `,"retention_seconds":3600,"readback":true` + credential + `}}`
}

func (s *notesStore) provider(t *testing.T, wrap string) *execProvider {
	t.Helper()
	return providerOf(t, s.config(t, "notes", wrap))
}

func providerOf(t *testing.T, config string) *execProvider {
	t.Helper()
	h := handlerOf(t, Options{}, capability{name: "notes.publish", kind: "exec", id: "notes", config: config})
	p, ok := h.(*execProvider)
	if !ok {
		t.Fatalf("an exec handler with a provider section is %T", h)
	}
	return p
}

var testPolicy = canonjson.PlainDigest([]byte("grant of notes.publish"))

// noteBinding is the sealed binding of one call publishing args.
func noteBinding(callID, args, epoch string) broker.EffectBinding {
	canon, err := canonjson.Canonical([]byte(args))
	if err != nil {
		panic(err)
	}
	return broker.EffectBinding{RunID: "run-1", PlanSHA256: canonjson.PlainDigest([]byte("plan")), CallID: callID,
		Capability: "notes.publish", Handler: plan.HandlerIdentity{Kind: "exec", ID: "notes", Version: "1", ConfigSHA256: canonjson.PlainDigest([]byte("config"))},
		PolicySHA256: testPolicy, RequestSHA256: broker.RequestDigest(callID, "notes.publish", canon),
		Acceptance: plan.AcceptanceStrict, ProviderID: "notes", ProviderEpoch: epoch}.Seal()
}

func accept(t *testing.T, p *execProvider, b broker.EffectBinding, args string) broker.AcceptResult {
	t.Helper()
	r, err := p.Accept(context.Background(), b, json.RawMessage(args))
	if err != nil {
		t.Fatalf("accept: %v", err)
	}
	return r
}

func query(t *testing.T, p *execProvider, b broker.EffectBinding) broker.QueryResult {
	t.Helper()
	r, err := p.Query(context.Background(), b)
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	return r
}

const (
	helloArgs = `{"title":"hello","body":"first"}`
	otherArgs = `{"title":"hello","body":"second"}`
)

// TestProviderExampleCommitReplayConflict: the example tool through the
// exec handler: a commit, its exact replay (also under concurrency), a
// factual no-change, both identity conflicts and binding mismatches, each
// with the note store unchanged where nothing may be committed.
func TestProviderExampleCommitReplayConflict(t *testing.T) {
	s := newNotesStore(t)
	p := s.provider(t, "")

	prof := p.Profile()
	if prof.ProviderID != "notes" || prof.Epoch != "e1" || len(prof.Missing()) != 0 || !prof.Readback || prof.RetentionSeconds != 3600 {
		t.Fatalf("profile %+v", prof)
	}

	b := noteBinding("capability-1", helloArgs, "e1")
	first := accept(t, p, b, helloArgs)
	if first.Kind != broker.AcceptTerminal || first.Replay || first.Projection.Decision != broker.DecisionCommitted ||
		string(first.Result) != `{"changed":true,"revision":1,"title":"hello"}` {
		t.Fatalf("first accept: %+v %s", first, first.Result)
	}

	// Exact replay, eight at once: the same decision, never a second effect.
	var wg sync.WaitGroup
	replays := make([]broker.AcceptResult, 8)
	for i := range replays {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replays[i], _ = p.Accept(context.Background(), b, json.RawMessage(helloArgs))
		}()
	}
	wg.Wait()
	for _, r := range replays {
		if r.Kind != broker.AcceptTerminal || !r.Replay || *r.Projection != *first.Projection || !bytes.Equal(r.Result, first.Result) {
			t.Fatalf("replay: %+v", r)
		}
	}

	// The same note body under a new call: a factual no-change.
	b2 := noteBinding("capability-2", helloArgs, "e1")
	if r := accept(t, p, b2, helloArgs); r.Projection.Decision != broker.DecisionNoChange || string(r.Result) != `{"changed":false,"revision":1,"title":"hello"}` {
		t.Fatalf("no change: %+v %s", r, r.Result)
	}

	conflicts := []struct {
		name   string
		b      broker.EffectBinding
		args   string
		kind   string
		reason string
	}{
		// The same call id (effect id) with other content.
		{"effect identity reused", noteBinding("capability-1", otherArgs, "e1"), otherArgs, broker.AcceptConflict, "effect_identity_reused"},
		// Another Plan (another effect id), the same grant, run and call id (authorization id).
		{"authorization identity reused", func() broker.EffectBinding {
			b := noteBinding("capability-1", otherArgs, "e1")
			b.PlanSHA256 = canonjson.PlainDigest([]byte("another plan"))
			return b.Seal()
		}(), otherArgs, broker.AcceptConflict, "authorization_identity_reused"},
		{"arguments differ from the request digest", noteBinding("capability-3", helloArgs, "e1"), otherArgs, broker.AcceptPresentationRejected, "binding_mismatch"},
		{"a field changed after sealing", func() broker.EffectBinding {
			b := noteBinding("capability-3", otherArgs, "e1")
			b.Capability = "notes.delete"
			return b
		}(), otherArgs, broker.AcceptPresentationRejected, "binding_mismatch"},
		{"a forged binding digest", func() broker.EffectBinding {
			b := noteBinding("capability-3", otherArgs, "e1")
			b.BindingSHA256 = canonjson.PlainDigest([]byte("forged"))
			return b
		}(), otherArgs, broker.AcceptPresentationRejected, "binding_mismatch"},
		{"another provider's binding", func() broker.EffectBinding {
			b := noteBinding("capability-3", otherArgs, "e1")
			b.ProviderID = "elsewhere"
			return b.Seal()
		}(), otherArgs, broker.AcceptPresentationRejected, "binding_mismatch"},
		{"arguments the store cannot apply", noteBinding("capability-3", `{"title":"x"}`, "e1"), `{"title":"x"}`, broker.AcceptPresentationRejected, "malformed"},
	}
	for _, tc := range conflicts {
		t.Run(tc.name, func(t *testing.T) {
			r := accept(t, p, tc.b, tc.args)
			if r.Kind != tc.kind || r.Reason != tc.reason || r.Projection != nil || r.Result != nil {
				t.Fatalf("got %+v, want %s %s", r, tc.kind, tc.reason)
			}
		})
	}
	if n := s.count(t, `SELECT count(*) FROM decisions`); n != 2 {
		t.Fatalf("%d decisions, want 2 (the commit and the no-change)", n)
	}
	if n := s.count(t, `SELECT count(*) FROM notes WHERE body = 'first' AND revision = 1`); n != 1 {
		t.Fatal("the note changed")
	}
	// The original result is unchanged by everything that was refused.
	if r := accept(t, p, b, helloArgs); !r.Replay || *r.Projection != *first.Projection {
		t.Fatalf("replay after refusals: %+v", r)
	}
}

// TestProviderExampleRevocationOrder: a revocation ordered first rejects
// the call (terminally: replayed, never committed later); an acceptance
// ordered first stays committed after the revocation.
func TestProviderExampleRevocationOrder(t *testing.T) {
	s := newNotesStore(t)
	p := s.provider(t, "")
	committed := noteBinding("capability-1", helloArgs, "e1")
	if r := accept(t, p, committed, helloArgs); r.Projection.Decision != broker.DecisionCommitted {
		t.Fatalf("accept: %+v", r)
	}

	receipt, err := p.Revoke(context.Background(), testPolicy)
	if err != nil || !canonjson.IsDigest(receipt) {
		t.Fatalf("revoke: %q %v", receipt, err)
	}
	if again, err := p.Revoke(context.Background(), testPolicy); err != nil || again != receipt {
		t.Fatalf("revoking again: %q %v, want the same receipt", again, err)
	}

	late := noteBinding("capability-2", otherArgs, "e1")
	r := accept(t, p, late, otherArgs)
	if r.Kind != broker.AcceptTerminal || r.Projection.Decision != broker.DecisionRejected || r.Projection.Reason != "revoked" ||
		r.Projection.PolicyOrderReceiptSHA256 != receipt || r.Result != nil {
		t.Fatalf("after revocation: %+v", r)
	}
	if q := query(t, p, late); q.Kind != broker.QueryFound || *q.Projection != *r.Projection || q.Result != nil {
		t.Fatalf("query of the rejection: %+v", q)
	}
	if q := query(t, p, committed); q.Kind != broker.QueryFound || q.Projection.Decision != broker.DecisionCommitted ||
		string(q.Result) != `{"changed":true,"revision":1,"title":"hello"}` {
		t.Fatalf("query of the earlier acceptance: %+v", q)
	}
	if s.count(t, `SELECT count(*) FROM notes WHERE body = 'first'`) != 1 {
		t.Fatal("the revoked call changed the note")
	}
	// One order: the acceptance, the revocation, the rejection.
	if got := s.count(t, `SELECT count(*) FROM decisions d JOIN policy_events r ON r.event = 'revoked'
		WHERE (d.decision = 'committed' AND d.sequence < r.sequence) OR (d.decision = 'rejected' AND d.sequence > r.sequence)`); got != 2 {
		t.Fatalf("order: %d decisions on the right side of the revocation, want 2", got)
	}
}

// TestProviderExampleResponseLoss: the tool commits and its answer is lost
// (it is killed after writing it): Accept's error leaves the outcome
// unknown, Query finds the committed decision, and the exact retry replays
// it: one effect.
func TestProviderExampleResponseLoss(t *testing.T) {
	s := newNotesStore(t)
	// The wrapper passes every request through and kills itself, answer
	// unsent, after the tool handled an accept.
	lossy := s.provider(t, `req=$(cat); out=$(printf '%s' "$req" | "$@"); case $req in *'"op":"accept"'*) kill -9 $$;; esac; printf '%s' "$out"`)
	p := s.provider(t, "")

	b := noteBinding("capability-1", helloArgs, "e1")
	if q := query(t, p, b); q.Kind != broker.QueryAbsent || !canonjson.IsDigest(q.AbsenceSHA256) {
		t.Fatalf("query before: %+v", q)
	}
	if _, err := lossy.Accept(context.Background(), b, json.RawMessage(helloArgs)); CodeOf(err) != CodeExecFailed {
		t.Fatalf("lost answer: %v, want %s", err, CodeExecFailed)
	}
	q := query(t, p, b)
	if q.Kind != broker.QueryFound || q.Projection.Decision != broker.DecisionCommitted || string(q.Result) != `{"changed":true,"revision":1,"title":"hello"}` {
		t.Fatalf("query after the loss: %+v", q)
	}
	r := accept(t, p, b, helloArgs)
	if !r.Replay || *r.Projection != *q.Projection || !bytes.Equal(r.Result, q.Result) {
		t.Fatalf("exact retry: %+v", r)
	}
	if n := s.count(t, `SELECT count(*) FROM decisions`); n != 1 {
		t.Fatalf("%d decisions, want 1", n)
	}
	// Absent again only for what was never decided, with another witness
	// once the order moved.
	other := noteBinding("capability-2", otherArgs, "e1")
	if a := query(t, p, other); a.Kind != broker.QueryAbsent || a.AbsenceSHA256 == "" {
		t.Fatalf("query of an undecided call: %+v", a)
	}
}

// TestProviderExampleRetentionAndEpochs: receipts past retention become
// tombstones (found, never a new effect); a retired epoch is rejected and
// never answers absent; a store restored from before the epoch change is
// fenced off (the tool answers nothing, so the profile declares nothing).
func TestProviderExampleRetentionAndEpochs(t *testing.T) {
	s := newNotesStore(t)
	p := s.provider(t, "")
	b := noteBinding("capability-1", helloArgs, "e1")
	first := accept(t, p, b, helloArgs)

	// Within retention (decided at 1000, retention 3600) nothing changes.
	if out := s.tool(t, "compact", "--now", "4599"); !strings.Contains(out, `"compacted":0`) {
		t.Fatalf("compact within retention: %s", out)
	}
	if out := s.tool(t, "compact", "--now", "4600"); !strings.Contains(out, `"compacted":1`) {
		t.Fatalf("compact: %s", out)
	}
	if q := query(t, p, b); q.Kind != broker.QueryTombstone || *q.Projection != *first.Projection || q.Result != nil {
		t.Fatalf("query of a tombstone: %+v", q)
	}
	if r := accept(t, p, b, helloArgs); r.Kind != broker.AcceptTerminal || !r.Replay || r.Reason != "compacted" ||
		*r.Projection != *first.Projection || r.Result != nil {
		t.Fatalf("replay of a tombstone: %+v", r)
	}

	backup, err := os.ReadFile(s.db)
	if err != nil {
		t.Fatal(err)
	}
	s.tool(t, "advance", "--epoch", "e2")
	if r := accept(t, p, b, helloArgs); r.Kind != broker.AcceptEpochRejected || r.Reason != "epoch_retired" {
		t.Fatalf("accept under a retired epoch: %+v", r)
	}
	if q := query(t, p, b); q.Kind != broker.QueryEpochRetired {
		t.Fatalf("query under a retired epoch: %+v", q)
	}
	if prof := p.Profile(); prof.Epoch != "e2" || len(prof.Missing()) != 0 {
		t.Fatalf("profile after the advance: %+v", prof)
	}
	b2 := noteBinding("capability-1", helloArgs, "e2")
	if r := accept(t, p, b2, helloArgs); r.Kind != broker.AcceptTerminal || r.Projection.Decision != broker.DecisionNoChange {
		t.Fatalf("accept under the new epoch: %+v", r)
	}

	// Restore the store from before the advance: the registry, which the
	// restore did not roll back, fences it.
	for _, suffix := range []string{"-wal", "-shm"} {
		_ = os.Remove(s.db + suffix)
	}
	if err := os.WriteFile(s.db, backup, 0o644); err != nil {
		t.Fatal(err)
	}
	restored := s.provider(t, "")
	if prof := restored.Profile(); len(prof.Guarantees) != 0 || prof.Readback || prof.Epoch != "" {
		t.Fatalf("profile of a rolled-back store: %+v", prof)
	}
	if _, err := restored.Query(context.Background(), b); CodeOf(err) != CodeExecFailed {
		t.Fatalf("query of a rolled-back store: %v", err)
	}
	if _, err := restored.Accept(context.Background(), b2, json.RawMessage(helloArgs)); CodeOf(err) != CodeExecFailed {
		t.Fatalf("accept on a rolled-back store: %v", err)
	}
	// The operator's way out: a fresh epoch; the old ones stay retired.
	s.tool(t, "advance", "--epoch", "e3")
	if q := query(t, restored, b2); q.Kind != broker.QueryEpochRetired {
		t.Fatalf("query of e2 after the restore: %+v", q)
	}
}

// TestProviderProfileMismatch: a tool that promises less than, or other
// than, the config declares is never presented a call.
func TestProviderProfileMismatch(t *testing.T) {
	s := newNotesStore(t)
	p := providerOf(t, s.config(t, "not-notes", ""))
	if prof := p.Profile(); len(prof.Guarantees) != 0 || prof.Readback {
		t.Fatalf("profile: %+v", prof)
	}
	b := noteBinding("capability-1", helloArgs, "e1")
	if r := accept(t, p, b, helloArgs); r.Kind != broker.AcceptPresentationRejected || r.Reason != CodeProviderProfileMismatch {
		t.Fatalf("accept: %+v", r)
	}
	if _, err := p.Query(context.Background(), b); CodeOf(err) != CodeProviderProfileMismatch {
		t.Fatalf("query: %v", err)
	}
	if _, err := p.Revoke(context.Background(), testPolicy); CodeOf(err) != CodeProviderProfileMismatch {
		t.Fatalf("revoke: %v", err)
	}
	if s.count(t, `SELECT count(*) FROM decisions`)+s.count(t, `SELECT count(*) FROM policy_events WHERE event = 'revoked'`) != 0 {
		t.Fatal("a mismatched provider was presented a call")
	}
	// At seal time the config alone speaks: nothing runs.
	h := &execProvider{execHandler: p.execHandler, declared: p.declared, checkOnly: true}
	if prof := h.Profile(); len(prof.Missing()) != 0 || prof.ProviderID != "not-notes" {
		t.Fatalf("seal-time profile: %+v", prof)
	}
	if _, err := p.Call(context.Background(), json.RawMessage(helloArgs)); CodeOf(err) != CodeProviderNoBinding {
		t.Fatalf("a call without a binding: %v", err)
	}
}

// answerBinding is the binding the scripted answers below are about.
var answerBinding = noteBinding("capability-1", helloArgs, "e1")

func projectionJSON(b broker.EffectBinding, decision, reason string, edit func(*broker.DecisionProjection)) string {
	ref := func(s string) string { return canonjson.PlainDigest([]byte(s)) }
	pr := broker.DecisionProjection{SchemaVersion: broker.DecisionProjectionSchema,
		ProviderRefSHA256: ref(b.ProviderID), EpochSHA256: ref(b.ProviderEpoch),
		EffectIDSHA256: ref(b.EffectID), AuthorizationIDSHA256: ref(b.AuthorizationID),
		BindingSHA256: b.BindingSHA256, Decision: decision, Reason: reason, Sequence: "uint:7",
		ReceiptSHA256: canonjson.PlainDigest([]byte("receipt"))}
	if edit != nil {
		edit(&pr)
	}
	raw, _ := json.Marshal(pr)
	return string(raw)
}

const (
	validProfile = `{"protocol":"apysup.provider.v1","kind":"profile","provider_id":"notes","epoch":"e1","guarantees":` +
		`["exact_binding","single_use","exact_replay","atomic_commit","revocation_ordering","query_absence","retention_tombstones","epoch_fence"],` +
		`"retention_seconds":3600,"readback":true}`
	answerHead = `{"protocol":"apysup.provider.v1",`
)

// answerCase is one scripted answer to one operation: ok, or the code of
// the error it must be.
type answerCase struct {
	name, op, answer, code string
}

func answerCases() []answerCase {
	committed := projectionJSON(answerBinding, "committed", "", nil)
	rejected := projectionJSON(answerBinding, "rejected", "revoked", nil)
	edited := func(f func(*broker.DecisionProjection)) string {
		return projectionJSON(answerBinding, "committed", "", f)
	}
	terminal := func(pr string) string {
		return answerHead + `"kind":"terminal","replay":false,"projection":` + pr + `,"result":{"ok":1}}`
	}
	bad := CodeProviderBadAnswer
	return []answerCase{
		{"terminal committed", opAccept, terminal(committed), ""},
		{"terminal rejected", opAccept, answerHead + `"kind":"terminal","replay":true,"projection":` + rejected + `}`, ""},
		{"presentation rejected", opAccept, answerHead + `"kind":"presentation_rejected","reason":"binding_mismatch"}`, ""},
		{"conflict", opAccept, answerHead + `"kind":"conflict","reason":"effect_identity_reused"}`, ""},
		{"epoch rejected", opAccept, answerHead + `"kind":"epoch_rejected"}`, ""},
		{"found", opQuery, answerHead + `"kind":"found","projection":` + committed + `,"result":[1]}`, ""},
		{"tombstone", opQuery, answerHead + `"kind":"tombstone","projection":` + committed + `}`, ""},
		{"absent", opQuery, answerHead + `"kind":"absent","absence_sha256":"` + canonjson.PlainDigest(nil) + `"}`, ""},
		{"epoch retired", opQuery, answerHead + `"kind":"epoch_retired","reason":"epoch_unknown"}`, ""},
		{"unavailable", opQuery, answerHead + `"kind":"unavailable","reason":"store_busy"}`, ""},
		{"revoked", opRevoke, answerHead + `"kind":"revoked","policy_order_receipt_sha256":"` + canonjson.PlainDigest(nil) + `"}`, ""},

		{"empty", opAccept, ``, bad},
		{"not JSON", opAccept, `committed`, bad},
		{"two values", opAccept, terminal(committed) + terminal(committed), bad},
		{"duplicate key", opAccept, answerHead + `"kind":"conflict","reason":"a","reason":"b"}`, bad},
		{"invalid UTF-8", opAccept, answerHead + `"kind":"conflict","reason":"` + "\xff" + `"}`, bad},
		{"no protocol", opAccept, `{"kind":"conflict","reason":"a"}`, bad},
		{"another protocol", opAccept, `{"protocol":"apysup.provider.v2","kind":"conflict","reason":"a"}`, bad},
		{"not an object", opAccept, `["terminal"]`, bad},
		{"unknown kind", opAccept, answerHead + `"kind":"committed","projection":` + committed + `}`, bad},
		{"a query's kind to accept", opAccept, answerHead + `"kind":"found","projection":` + committed + `,"result":1}`, bad},
		{"an accept's kind to query", opQuery, terminal(committed), bad},
		{"unknown member", opAccept, answerHead + `"kind":"conflict","reason":"a","detail":"x"}`, bad},
		{"member of another kind", opAccept, answerHead + `"kind":"conflict","reason":"a","replay":true}`, bad},
		{"terminal without replay", opAccept, answerHead + `"kind":"terminal","projection":` + committed + `,"result":1}`, bad},
		{"terminal without projection", opAccept, answerHead + `"kind":"terminal","replay":false,"result":1}`, bad},
		{"replay not a boolean", opAccept, answerHead + `"kind":"terminal","replay":"no","projection":` + committed + `,"result":1}`, bad},
		{"committed without result", opAccept, answerHead + `"kind":"terminal","replay":false,"projection":` + committed + `}`, bad},
		{"rejected with a result", opAccept, answerHead + `"kind":"terminal","replay":false,"projection":` + rejected + `,"result":{}}`, bad},
		{"tombstone with a result", opQuery, answerHead + `"kind":"tombstone","projection":` + committed + `,"result":1}`, bad},
		{"conflict without reason", opAccept, answerHead + `"kind":"conflict"}`, bad},
		{"reason not a token", opAccept, answerHead + `"kind":"conflict","reason":"Identity reused"}`, bad},
		{"reason too long", opAccept, answerHead + `"kind":"conflict","reason":"` + strings.Repeat("a", 65) + `"}`, bad},
		{"projection about another binding", opAccept, terminal(edited(func(p *broker.DecisionProjection) {
			p.BindingSHA256 = noteBinding("capability-2", helloArgs, "e1").BindingSHA256
		})), bad},
		{"effect reference not a digest", opAccept, terminal(edited(func(p *broker.DecisionProjection) { p.EffectIDSHA256 = answerBinding.CallID })), bad},
		{"authorization reference not a digest", opAccept, terminal(edited(func(p *broker.DecisionProjection) { p.AuthorizationIDSHA256 = "" })), bad},
		{"provider reference not a digest", opAccept, terminal(edited(func(p *broker.DecisionProjection) { p.ProviderRefSHA256 = "notes" })), bad},
		{"epoch reference not a digest", opAccept, terminal(edited(func(p *broker.DecisionProjection) { p.EpochSHA256 = "e1" })), bad},
		{"replay of a compacted decision", opAccept, answerHead + `"kind":"terminal","replay":true,"reason":"compacted","projection":` + committed + `}`, ""},
		{"compacted but new", opAccept, answerHead + `"kind":"terminal","replay":false,"reason":"compacted","projection":` + committed + `}`, bad},
		{"compacted with a result", opAccept, answerHead + `"kind":"terminal","replay":true,"reason":"compacted","projection":` + committed + `,"result":1}`, bad},
		{"terminal with another reason", opAccept, answerHead + `"kind":"terminal","replay":true,"reason":"because","projection":` + committed + `,"result":1}`, bad},
		{"projection schema", opAccept, terminal(edited(func(p *broker.DecisionProjection) { p.SchemaVersion = "v0" })), bad},
		{"projection decision", opAccept, terminal(edited(func(p *broker.DecisionProjection) { p.Decision = "maybe" })), bad},
		{"committed with a reason", opAccept, terminal(edited(func(p *broker.DecisionProjection) { p.Reason = "revoked" })), bad},
		{"rejected for an unknown reason", opAccept, answerHead + `"kind":"terminal","replay":false,"projection":` +
			projectionJSON(answerBinding, "rejected", "because", nil) + `}`, bad},
		{"sequence with a leading zero", opAccept, terminal(edited(func(p *broker.DecisionProjection) { p.Sequence = "uint:07" })), bad},
		{"sequence without its prefix", opAccept, terminal(edited(func(p *broker.DecisionProjection) { p.Sequence = "7" })), bad},
		{"receipt not a digest", opAccept, terminal(edited(func(p *broker.DecisionProjection) { p.ReceiptSHA256 = "sha256:ABC" })), bad},
		{"policy receipt not a digest", opAccept, terminal(edited(func(p *broker.DecisionProjection) { p.PolicyOrderReceiptSHA256 = "x" })), bad},
		{"projection member unknown", opAccept, terminal(strings.Replace(committed, `{`, `{"target":"x",`, 1)), bad},
		{"projection member missing", opAccept, terminal(strings.Replace(committed, `"sequence":"uint:7",`, ``, 1)), bad},
		{"result larger than max_output_bytes", opAccept, answerHead + `"kind":"terminal","replay":false,"projection":` + committed +
			`,"result":"` + strings.Repeat("r", 200) + `"}`, bad},
		{"absent without witness", opQuery, answerHead + `"kind":"absent"}`, bad},
		{"absent with a bad witness", opQuery, answerHead + `"kind":"absent","absence_sha256":"none"}`, bad},
		{"unavailable without reason", opQuery, answerHead + `"kind":"unavailable"}`, bad},
		{"revoked without receipt", opRevoke, answerHead + `"kind":"revoked"}`, bad},
		{"revoked with a bad receipt", opRevoke, answerHead + `"kind":"revoked","policy_order_receipt_sha256":"sha256:"}`, bad},
		{"answer beyond the bound", opAccept, answerHead + `"kind":"conflict","reason":"a","x":"` + strings.Repeat("x", 200+MaxProviderEnvelopeBytes) + `"}`, CodeExecOutputTooLarge},
	}
}

// scripted is a provider whose tool answers the profile request with
// profile and every other request with answer.
func scripted(t *testing.T, profile, answer, extra string) *execProvider {
	t.Helper()
	env, _ := json.Marshal(map[string]string{"PROFILE": profile, "ANSWER": answer})
	return providerOf(t, `{"argv":["/bin/sh","-c","req=$(cat); case $req in *'\"op\":\"profile\"'*) printf '%s' \"$PROFILE\";; *) printf '%s' \"$ANSWER\";; esac"],`+
		`"env":`+string(env)+`,"max_output_bytes":200,"provider":{"id":"notes","guarantees":`+allGuarantees+`,"retention_seconds":3600,"readback":true}`+extra+`}`)
}

// ask sends op about answerBinding and returns the error.
func ask(p *execProvider, op string) error {
	ctx := context.Background()
	var err error
	switch op {
	case opAccept:
		_, err = p.Accept(ctx, answerBinding, json.RawMessage(helloArgs))
	case opQuery:
		_, err = p.Query(ctx, answerBinding)
	case opRevoke:
		_, err = p.Revoke(ctx, testPolicy)
	}
	return err
}

// TestProviderAnswers: a tool's answer is an answer only when it is
// exactly one well-formed answer to the request, about the binding
// presented; anything else is an error (the outcome unknown), never a
// decision.
func TestProviderAnswers(t *testing.T) {
	for _, tc := range answerCases() {
		t.Run(tc.name, func(t *testing.T) {
			err := ask(scripted(t, validProfile, tc.answer, ""), tc.op)
			if CodeOf(err) != tc.code || (tc.code == "") != (err == nil) {
				t.Fatalf("got %v, want %q", err, tc.code)
			}
		})
	}
	// The command's own failures.
	for name, script := range map[string]string{
		"non-zero exit":  `cat >/dev/null; printf '%s' '{"protocol":"apysup.provider.v1","kind":"conflict","reason":"a"}'; exit 1`,
		"killed":         `kill -9 $$`,
		"timeout":        `exec sleep 1000`,
		"endless output": `exec yes`,
	} {
		t.Run(name, func(t *testing.T) {
			argv, _ := json.Marshal([]string{"/bin/sh", "-c", script})
			p := providerOf(t, `{"argv":`+string(argv)+`,"timeout":"100ms","provider":{"id":"notes","guarantees":[]}}`)
			p.epoch = "e1" // the profile is known: this is the answer to an accept
			_, err := p.Accept(context.Background(), answerBinding, json.RawMessage(helloArgs))
			if c := CodeOf(err); c != CodeExecFailed && c != CodeExecTimeout && c != CodeExecOutputTooLarge {
				t.Fatalf("got %v", err)
			}
		})
	}
}

// TestProviderProfiles: the tool's profile must be well formed and cover
// the config's.
func TestProviderProfiles(t *testing.T) {
	profile := func(members string) string {
		return answerHead + `"kind":"profile",` + members + `}`
	}
	ok := `"provider_id":"notes","epoch":"e1","guarantees":` + allGuarantees + `,"retention_seconds":3600,"readback":true`
	for _, tc := range []struct{ name, profile, extra, code string }{
		{"covers", profile(ok), "", ""},
		{"longer retention", profile(strings.Replace(ok, "3600", "7200", 1)), "", ""},
		{"no readback", profile(strings.Replace(ok, `"readback":true`, `"readback":false`, 1)), "", CodeProviderProfileMismatch},
		{"shorter retention", profile(strings.Replace(ok, "3600", "60", 1)), "", CodeProviderProfileMismatch},
		{"a guarantee missing", profile(strings.Replace(ok, `"epoch_fence"`, `"single_use"`, 1)), "", CodeProviderBadAnswer},
		{"fewer guarantees", profile(strings.Replace(ok, `,"epoch_fence"`, ``, 1)), "", CodeProviderProfileMismatch},
		{"another provider", profile(strings.Replace(ok, `"notes"`, `"other"`, 1)), "", CodeProviderProfileMismatch},
		{"unknown guarantee", profile(strings.Replace(ok, `"epoch_fence"`, `"telepathy"`, 1)), "", CodeProviderBadAnswer},
		{"epoch not a name", profile(strings.Replace(ok, `"e1"`, `"e 1"`, 1)), "", CodeProviderBadAnswer},
		{"negative retention", profile(strings.Replace(ok, "3600", "-1", 1)), "", CodeProviderBadAnswer},
		{"fractional retention", profile(strings.Replace(ok, "3600", "1.5", 1)), "", CodeProviderBadAnswer},
		{"member missing", profile(strings.Replace(ok, `,"readback":true`, ``, 1)), "", CodeProviderBadAnswer},
		{"an accept's answer", answerHead + `"kind":"conflict","reason":"a"}`, "", CodeProviderBadAnswer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := scripted(t, tc.profile, answerHead+`"kind":"revoked","policy_order_receipt_sha256":"`+canonjson.PlainDigest(nil)+`"}`, tc.extra)
			_, err := p.Revoke(context.Background(), testPolicy)
			if CodeOf(err) != tc.code || (tc.code == "") != (err == nil) {
				t.Fatalf("got %v, want %q", err, tc.code)
			}
			if prof := p.Profile(); (len(prof.Missing()) == 0) != (tc.code == "") {
				t.Fatalf("profile %+v", prof)
			}
		})
	}
}

// TestProviderConfig: the provider section is read strictly.
func TestProviderConfig(t *testing.T) {
	for _, tc := range []struct{ name, provider, path string }{
		{"not an object", `true`, "provider"},
		{"no id", `{"guarantees":[]}`, "provider.id"},
		{"bad id", `{"id":"a b","guarantees":[]}`, "provider.id"},
		{"no guarantees", `{"id":"a"}`, "provider.guarantees"},
		{"unknown guarantee", `{"id":"a","guarantees":["fast"]}`, "provider.guarantees"},
		{"duplicate guarantee", `{"id":"a","guarantees":["single_use","single_use"]}`, "provider.guarantees"},
		{"negative retention", `{"id":"a","guarantees":[],"retention_seconds":-1}`, "provider.retention_seconds"},
		{"unknown field", `{"id":"a","guarantees":[],"audience":"x"}`, "provider.audience"},
		{"relative credential", `{"id":"a","guarantees":[],"credential_file":"notes.key"}`, "provider.credential_file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := build(t, Options{}, capability{name: "notes.publish", kind: "exec", id: "notes",
				config: `{"argv":["/bin/sh"],"provider":` + tc.provider + `}`})
			if !problemAt(err, CodeInvalidConfig, "capabilities[0].handler.config."+tc.path) {
				t.Fatalf("got %v", err)
			}
		})
	}

	// The key is read when the handlers are built, never when sealing.
	dir := t.TempDir()
	short, missing := filepath.Join(dir, "short"), filepath.Join(dir, "missing")
	if err := os.WriteFile(short, []byte("abcd\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{short, missing} {
		c := capability{name: "notes.publish", kind: "exec", id: "notes",
			config: `{"argv":["/bin/sh"],"provider":{"id":"a","guarantees":[],"credential_file":"` + key + `"}}`}
		if err := (Checker{}).CheckHandlers(manifestOf(t, c)); err != nil {
			t.Fatalf("check: %v", err)
		}
		if _, err := build(t, Options{}, c); !problemAt(err, CodeHandlerSetup, "capabilities[0].handler.config.provider.credential_file") {
			t.Fatalf("build with %s: %v", filepath.Base(key), err)
		}
	}
}

// FuzzProviderAnswer: whatever a tool writes, parsing it never panics, an
// error is provider_bad_answer, and what is accepted is an answer about
// the binding presented, of a kind the operation can have, with a result
// exactly when the decision has one.
func FuzzProviderAnswer(f *testing.F) {
	for _, tc := range answerCases() {
		f.Add(tc.op, []byte(tc.answer))
	}
	f.Add(opProfile, []byte(validProfile))
	const maxResult = 200
	f.Fuzz(func(t *testing.T, op string, answer []byte) {
		var err error
		switch op {
		case opAccept:
			var r broker.AcceptResult
			r, err = parseAcceptAnswer(answer, answerBinding, maxResult)
			if err == nil {
				_, known := answerShapes[opAccept][r.Kind]
				terminal := r.Kind == broker.AcceptTerminal
				if !known || terminal != (r.Projection != nil) || terminal && !projectionOf(r.Projection, answerBinding) ||
					(r.Result != nil) != (terminal && r.Projection.Decision != broker.DecisionRejected && r.Reason != "compacted") ||
					len(r.Result) > maxResult || r.Reason == "compacted" && !r.Replay {
					t.Fatalf("accepted %+v from %q", r, answer)
				}
			}
		case opQuery:
			var r broker.QueryResult
			r, err = parseQueryAnswer(answer, answerBinding, maxResult)
			if err == nil {
				_, known := answerShapes[opQuery][r.Kind]
				decided := r.Kind == broker.QueryFound || r.Kind == broker.QueryTombstone
				if !known || decided != (r.Projection != nil) || decided && !projectionOf(r.Projection, answerBinding) ||
					(r.Result != nil) != (r.Kind == broker.QueryFound && r.Projection.Decision != broker.DecisionRejected) ||
					(r.Kind == broker.QueryAbsent) != canonjson.IsDigest(r.AbsenceSHA256) {
					t.Fatalf("accepted %+v from %q", r, answer)
				}
			}
		case opRevoke:
			var receipt string
			receipt, err = parseRevokeAnswer(answer)
			if err == nil && !canonjson.IsDigest(receipt) {
				t.Fatalf("accepted %q from %q", receipt, answer)
			}
		default:
			var p broker.ProviderProfile
			p, err = parseProfileAnswer(answer)
			if err == nil && (!providerNameRE.MatchString(p.ProviderID) || !providerNameRE.MatchString(p.Epoch) || p.RetentionSeconds < 0) {
				t.Fatalf("accepted %+v from %q", p, answer)
			}
		}
		if err != nil && CodeOf(err) != CodeProviderBadAnswer {
			t.Fatalf("error %v", err)
		}
	})
}

// TestProviderExamplePresentation: a presentation the store cannot
// authenticate, or of a grant it did not issue to the caller, reserves
// nothing; callers in other security contexts share no identity.
func TestProviderExamplePresentation(t *testing.T) {
	s := newNotesStore(t)
	alice := s.provider(t, "")
	b := noteBinding("capability-1", helloArgs, "e1")

	forged := filepath.Join(s.dir, "forged-key")
	if err := os.WriteFile(forged, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	otherGrant := s.issue(t, "tenant-a", canonjson.PlainDigest([]byte("another grant")))
	for _, tc := range []struct{ name, key, reason string }{
		{"no credential", "", "malformed"},
		{"a key the store never issued", forged, "untrusted_issuer"},
		{"a credential without the call's grant", otherGrant, "sender_authentication_failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := providerOf(t, s.configWith(t, "notes", "", tc.key))
			if r := accept(t, p, b, helloArgs); r.Kind != broker.AcceptPresentationRejected || r.Reason != tc.reason {
				t.Fatalf("accept: %+v, want presentation_rejected %s", r, tc.reason)
			}
			if q := query(t, p, b); q.Kind != broker.QueryUnavailable || q.Reason != tc.reason {
				t.Fatalf("query: %+v", q)
			}
			if _, err := p.Revoke(context.Background(), testPolicy); CodeOf(err) != CodeExecFailed {
				t.Fatalf("revoke: %v", err)
			}
		})
	}
	if n := s.count(t, `SELECT count(*) FROM decisions`) + s.count(t, `SELECT count(*) FROM policy_events WHERE event = 'revoked'`); n != 0 {
		t.Fatalf("%d rows after refused presentations", n)
	}

	// Bob, another tenant holding the same grant, presents the same
	// identities: another security context, no conflict, no shared read.
	bob := providerOf(t, s.configWith(t, "notes", "", s.issue(t, "tenant-b", testPolicy)))
	ra := accept(t, alice, b, helloArgs)
	if q := query(t, bob, b); q.Kind != broker.QueryAbsent {
		t.Fatalf("Bob reads Alice's decision: %+v", q)
	}
	rb := accept(t, bob, b, helloArgs)
	if ra.Kind != broker.AcceptTerminal || rb.Kind != broker.AcceptTerminal || rb.Replay ||
		rb.Projection.EffectIDSHA256 == ra.Projection.EffectIDSHA256 || rb.Projection.ReceiptSHA256 == ra.Projection.ReceiptSHA256 {
		t.Fatalf("Alice %+v, Bob %+v: one identity across security contexts", ra.Projection, rb.Projection)
	}
}

// TestProviderExampleLostRegistry: a store whose epoch registry is gone
// cannot prove its fence: it answers nothing, and nothing recreates the
// registry behind the operator's back.
func TestProviderExampleLostRegistry(t *testing.T) {
	s := newNotesStore(t)
	if err := os.Remove(s.epochs); err != nil {
		t.Fatal(err)
	}
	p := s.provider(t, "")
	if prof := p.Profile(); len(prof.Guarantees) != 0 || prof.Readback {
		t.Fatalf("profile without a registry: %+v", prof)
	}
	b := noteBinding("capability-1", helloArgs, "e1")
	if _, err := p.Accept(context.Background(), b, json.RawMessage(helloArgs)); CodeOf(err) != CodeExecFailed {
		t.Fatalf("accept without a registry: %v", err)
	}
	if _, err := os.Stat(s.epochs); !os.IsNotExist(err) {
		t.Fatalf("the registry came back: %v", err)
	}
	if n := s.count(t, `SELECT count(*) FROM decisions`); n != 0 {
		t.Fatalf("%d decisions", n)
	}
}

func TestValidSequenceIsItsRegex(t *testing.T) {
	re := regexp.MustCompile(`^uint:(0|[1-9][0-9]{0,19})$`)
	for _, s := range []string{"", "uint:", "uint:0", "uint:00", "uint:01", "uint:1", "uint:10",
		"uint:12345678901234567890", "uint:123456789012345678901", "uint:-1", "uint:1a", "int:1",
		"uint:1\n", " uint:1", "uint:٣", "UINT:1", "uint:99999999999999999999"} {
		if got, want := validSequence(s), re.MatchString(s); got != want {
			t.Errorf("validSequence(%q) = %v, the regexp says %v", s, got, want)
		}
	}
}
