package broker

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/plan"
)

// fakeProvider is an in-memory Provider that keeps its decisions by effect
// id, like a provider's store, and can be told to lose a response after
// committing, refuse, conflict or be unreadable.
type fakeProvider struct {
	mu         sync.Mutex
	profile    ProviderProfile
	decisions  map[string]fakeDecision // by effect id
	seq        int
	accepts    int // Accept calls
	queries    int
	calls      int // Handler.Call (acceptance off)
	effects    int // effects committed
	bindings   []EffectBinding
	lose       int    // the next n Accepts commit, then return an error (the response is lost)
	failBefore int    // the next n Accepts return an error before committing anything
	answer     string // a non-terminal Accept kind to return instead of deciding
	reject     bool   // decide rejected (policy)
	compacted  bool   // decisions keep no result (a replay of a compacted decision)
	unreadable bool   // Query errors (unavailable)
}

type fakeDecision struct {
	projection DecisionProjection
	result     json.RawMessage
}

func newFakeProvider(guarantees []Guarantee) *fakeProvider {
	return &fakeProvider{
		profile:   ProviderProfile{ProviderID: "fake-1", Epoch: "e1", Guarantees: guarantees, RetentionSeconds: 3600, Readback: true},
		decisions: map[string]fakeDecision{},
	}
}

func (p *fakeProvider) Profile() ProviderProfile {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.profile
}

func (p *fakeProvider) Call(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	p.effects++
	return json.RawMessage(`{"echo":` + string(args) + `}`), nil
}

func (p *fakeProvider) Accept(_ context.Context, b EffectBinding, args json.RawMessage) (AcceptResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.accepts++
	p.bindings = append(p.bindings, b)
	canon, err := canonjson.Canonical(args)
	if err != nil || !b.Verify() || b.RequestSHA256 != RequestDigest(b.CallID, b.Capability, canon) {
		return AcceptResult{Kind: AcceptPresentationRejected, Reason: "binding_mismatch"}, nil
	}
	if b.ProviderEpoch != p.profile.Epoch {
		return AcceptResult{Kind: AcceptEpochRejected}, nil
	}
	if d, ok := p.decisions[b.EffectID]; ok {
		if d.projection.BindingSHA256 != b.BindingSHA256 {
			return AcceptResult{Kind: AcceptConflict, Reason: "effect_bound"}, nil
		}
		proj := d.projection
		return AcceptResult{Kind: AcceptTerminal, Replay: true, Projection: &proj, Result: d.result}, nil
	}
	if p.failBefore > 0 {
		p.failBefore--
		return AcceptResult{}, errors.New("connection reset before commit")
	}
	if p.answer != "" {
		return AcceptResult{Kind: p.answer, Reason: "test"}, nil
	}
	p.seq++
	d := fakeDecision{projection: DecisionProjection{
		SchemaVersion: DecisionProjectionSchema, BindingSHA256: b.BindingSHA256, Decision: DecisionCommitted,
		Sequence: "uint:" + strconv.Itoa(p.seq), ReceiptSHA256: canonjson.PlainDigest([]byte(b.EffectID + "/" + strconv.Itoa(p.seq))),
	}}
	if p.reject {
		d.projection.Decision, d.projection.Reason = DecisionRejected, "revoked"
	} else {
		d.result = json.RawMessage(`{"stored":` + string(canon) + `}`)
		p.effects++
	}
	if p.compacted {
		d.result = nil
	}
	p.decisions[b.EffectID] = d
	if p.lose > 0 {
		p.lose--
		return AcceptResult{}, errors.New("connection reset after commit")
	}
	proj := d.projection
	return AcceptResult{Kind: AcceptTerminal, Projection: &proj, Result: d.result}, nil
}

func (p *fakeProvider) Query(_ context.Context, b EffectBinding) (QueryResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.queries++
	if p.unreadable {
		return QueryResult{}, errors.New("provider unavailable")
	}
	d, ok := p.decisions[b.EffectID]
	if !ok {
		return QueryResult{Kind: QueryAbsent, AbsenceSHA256: canonjson.PlainDigest([]byte("absent " + b.EffectID))}, nil
	}
	proj := d.projection
	return QueryResult{Kind: QueryFound, Projection: &proj, Result: d.result}, nil
}

func (p *fakeProvider) count() (accepts, queries, effects, calls int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepts, p.queries, p.effects, p.calls
}

// memJournal is an in-memory CallJournal: a run's calls across attempts.
type memJournal struct {
	mu    sync.Mutex
	calls map[string]*memCall
}

type memCall struct {
	request    string
	state      string
	binding    *EffectBinding
	completion *JournalCompletion
}

func newMemJournal() *memJournal { return &memJournal{calls: map[string]*memCall{}} }

func (j *memJournal) Intent(_ context.Context, callID, requestSHA256 string) (JournaledCall, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	c, ok := j.calls[callID]
	if !ok {
		j.calls[callID] = &memCall{request: requestSHA256, state: JournalPending}
		return JournaledCall{State: JournalNew}, nil
	}
	if c.request != requestSHA256 {
		return JournaledCall{}, errors.New("identity mismatch")
	}
	switch c.state {
	case JournalCompleted:
		rec, err := DecodeReceipt(c.completion.Receipt)
		if err != nil {
			return JournaledCall{}, err
		}
		var resp struct {
			Result json.RawMessage `json:"result"`
		}
		_ = json.Unmarshal(c.completion.Response, &resp)
		return JournaledCall{State: JournalCompleted, Receipt: rec, Result: resp.Result, Projection: c.completion.Projection}, nil
	case JournalUnknown:
		return JournaledCall{State: JournalUnknown, Binding: c.binding}, nil
	}
	return JournaledCall{State: JournalPending}, nil
}

func (j *memJournal) AwaitApproval(context.Context, string, string) error { return nil }

func (j *memJournal) Decide(context.Context, string, string, ApprovalState, time.Time) error {
	return nil
}

func (j *memJournal) BeginDispatch(_ context.Context, callID string, b EffectBinding) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.calls[callID].state, j.calls[callID].binding = JournalUnknown, &b
	return nil
}

func (j *memJournal) Complete(_ context.Context, callID string, c JournalCompletion) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.calls[callID].state, j.calls[callID].completion = JournalCompleted, &c
	return nil
}

func (j *memJournal) state(callID string) string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.calls[callID].state
}

// acceptancePlan is a Plan of one capability, "store", served by h with
// the given acceptance, under a grant with max_calls 5.
func acceptancePlan(t testing.TB, acceptance plan.Acceptance, h any) (*plan.Plan, *Handlers) {
	t.Helper()
	hid := handlerID(t, "store")
	hs := NewHandlers()
	if err := hs.Add(hid, h); err != nil {
		t.Fatal(err)
	}
	r, err := plan.NewRegistry(10)
	if err != nil {
		t.Fatal(err)
	}
	obj := json.RawMessage(`{"type":"object"}`)
	if err := r.Register(plan.Spec{Name: "store", Version: "1", Effect: plan.EffectWrite, Playback: plan.PlaybackLive, Handler: hid,
		InputSchema: obj, OutputSchema: obj, Acceptance: acceptance}); err != nil {
		t.Fatal(err)
	}
	g, err := plan.NewGrant(json.RawMessage(`{"max_calls":5}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Bind("store", g); err != nil {
		t.Fatal(err)
	}
	p, err := r.Seal()
	if err != nil {
		t.Fatal(err)
	}
	return p, hs
}

func acceptanceBroker(t testing.TB, p *plan.Plan, hs *Handlers, j CallJournal) *Broker {
	t.Helper()
	cfg := Config{Plan: p, RunID: "run-keyed", Surface: plan.SurfaceDirect, Handlers: hs}
	if j != nil {
		cfg.Journal = j
	}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// bindingSeer records the binding in its context.
type bindingSeer struct {
	mu   sync.Mutex
	seen []EffectBinding
}

func (s *bindingSeer) Call(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	b, ok := EffectBindingFrom(ctx)
	if !ok {
		return nil, errors.New("no binding")
	}
	s.mu.Lock()
	s.seen = append(s.seen, b)
	s.mu.Unlock()
	return json.RawMessage(`{}`), nil
}

func TestHandlerSeesItsEffectBinding(t *testing.T) {
	seer := &bindingSeer{}
	p, hs := acceptancePlan(t, "", seer)
	b := acceptanceBroker(t, p, hs, nil)
	if d := decode(t, b.Call(context.Background(), frameOf("capability-1", "store", `{"k": 1}`))); d.Status != StatusOK {
		t.Fatalf("call: %+v", d)
	}
	if len(seer.seen) != 1 {
		t.Fatalf("bindings seen: %d", len(seer.seen))
	}
	got := seer.seen[0]
	c, _ := p.Lookup("store")
	want := EffectBinding{RunID: "run-keyed", PlanSHA256: p.Identity(), CallID: "capability-1", Capability: "store",
		Handler: c.Handler(), PolicySHA256: p.Grants()[0].PolicySHA256,
		RequestSHA256: RequestDigest("capability-1", "store", json.RawMessage(`{"k":1}`)), Acceptance: plan.AcceptanceOff}.Seal()
	if got != want || !got.Verify() {
		t.Fatalf("binding\n got %+v\nwant %+v", got, want)
	}

	// A Provider's binding names its provider and epoch.
	fp := newFakeProvider(StrictGuarantees)
	p, hs = acceptancePlan(t, plan.AcceptanceStrict, fp)
	b = acceptanceBroker(t, p, hs, nil)
	b.Call(context.Background(), frameOf("capability-1", "store", `{}`))
	if eb := fp.bindings[0]; eb.ProviderID != "fake-1" || eb.ProviderEpoch != "e1" || eb.Acceptance != plan.AcceptanceStrict || !eb.Verify() {
		t.Fatalf("provider binding: %+v", eb)
	}
}

// TestEffectIDStableAcrossAttempts: every attempt of a keyed run (same run
// id) binds the same call to the same effect; another run does not.
func TestEffectIDStableAcrossAttempts(t *testing.T) {
	seer := &bindingSeer{}
	p, hs := acceptancePlan(t, "", seer)
	for _, runID := range []string{"run-keyed", "run-keyed", "run-other"} {
		b, err := New(Config{Plan: p, RunID: runID, Surface: plan.SurfaceDirect, Handlers: hs})
		if err != nil {
			t.Fatal(err)
		}
		b.Call(context.Background(), frameOf("capability-1", "store", `{"k":1}`))
	}
	s := seer.seen
	if len(s) != 3 || s[0].EffectID != s[1].EffectID || s[0].BindingSHA256 != s[1].BindingSHA256 || s[0].AuthorizationID != s[1].AuthorizationID {
		t.Fatalf("two attempts of one keyed run: %+v", s)
	}
	if s[2].EffectID == s[0].EffectID || s[2].AuthorizationID == s[0].AuthorizationID {
		t.Fatal("another run shares the effect or authorization id")
	}
}

// TestEffectBindingCoversEveryField: changing any bound field changes the
// binding digest (and the identities that name it), and Verify detects a
// field or identity changed without sealing again.
func TestEffectBindingCoversEveryField(t *testing.T) {
	hid, _ := plan.NewHandlerIdentity("kv", "store", "1", json.RawMessage(`{"path":"a"}`))
	other, _ := plan.NewHandlerIdentity("kv", "store", "1", json.RawMessage(`{"path":"b"}`))
	base := EffectBinding{RunID: "r", PlanSHA256: "sha256:p", CallID: "capability-1", Capability: "c", Handler: hid,
		PolicySHA256: "sha256:g", ApprovalRequestID: "apr_1", RequestSHA256: "sha256:q", Acceptance: plan.AcceptanceStrict,
		ProviderID: "prov", ProviderEpoch: "e1"}.Seal()
	cases := []struct {
		field         string
		change        func(*EffectBinding)
		effect, authz bool // whether the effect and authorization ids change too
	}{
		{"run_id", func(b *EffectBinding) { b.RunID = "r2" }, true, true},
		{"plan_sha256", func(b *EffectBinding) { b.PlanSHA256 = "sha256:p2" }, true, false},
		{"call_id", func(b *EffectBinding) { b.CallID = "capability-2" }, true, true},
		{"capability", func(b *EffectBinding) { b.Capability = "c2" }, false, false},
		{"handler", func(b *EffectBinding) { b.Handler = other }, false, false},
		{"policy_sha256", func(b *EffectBinding) { b.PolicySHA256 = "sha256:g2" }, false, true},
		{"approval_request_id", func(b *EffectBinding) { b.ApprovalRequestID = "apr_2" }, false, true},
		{"request_sha256", func(b *EffectBinding) { b.RequestSHA256 = "sha256:q2" }, false, false},
		{"acceptance", func(b *EffectBinding) { b.Acceptance = plan.AcceptanceNoBlindRetry }, false, false},
		{"provider_id", func(b *EffectBinding) { b.ProviderID = "prov2" }, false, false},
		{"provider_epoch", func(b *EffectBinding) { b.ProviderEpoch = "e2" }, false, false},
	}
	// Every field of the struct but the identities is in the table.
	var fields map[string]any
	_ = json.Unmarshal(canonjson.MustMarshal(base), &fields)
	for _, tc := range cases {
		delete(fields, tc.field)
	}
	for _, id := range []string{"schema_version", "effect_id", "authorization_id", "binding_sha256"} {
		delete(fields, id)
	}
	if len(fields) != 0 {
		t.Fatalf("binding fields without a case: %v", fields)
	}
	for _, tc := range cases {
		t.Run(tc.field, func(t *testing.T) {
			b := base
			tc.change(&b)
			if b.Verify() {
				t.Fatal("Verify accepts a changed field under the old identities")
			}
			b = b.Seal()
			if b.BindingSHA256 == base.BindingSHA256 {
				t.Fatal("binding digest unchanged")
			}
			if (b.EffectID != base.EffectID) != tc.effect || (b.AuthorizationID != base.AuthorizationID) != tc.authz {
				t.Fatalf("effect id changed %v (want %v), authorization id changed %v (want %v)",
					b.EffectID != base.EffectID, tc.effect, b.AuthorizationID != base.AuthorizationID, tc.authz)
			}
		})
	}
	for name, tamper := range map[string]func(*EffectBinding){
		"effect_id":        func(b *EffectBinding) { b.EffectID = base.AuthorizationID },
		"authorization_id": func(b *EffectBinding) { b.AuthorizationID = base.EffectID },
		"binding_sha256":   func(b *EffectBinding) { b.BindingSHA256 = base.EffectID },
		"schema_version":   func(b *EffectBinding) { b.SchemaVersion = "apysup.effect_binding.v2" },
	} {
		b := base
		tamper(&b)
		if b.Verify() {
			t.Errorf("Verify accepts a tampered %s", name)
		}
	}
}

func TestStrictNeedsAFullProvider(t *testing.T) {
	for name, h := range map[string]any{
		"not a provider":      &counting{},
		"missing a guarantee": newFakeProvider(StrictGuarantees[1:]),
	} {
		p, hs := acceptancePlan(t, plan.AcceptanceStrict, h)
		_, err := New(Config{Plan: p, RunID: "r", Surface: plan.SurfaceDirect, Handlers: hs})
		var ae *AcceptanceError
		if plan.CodeOf(err) != CodeAcceptanceUnsupported || !errors.As(err, &ae) || ae.Capability != "store" || len(ae.Missing) == 0 {
			t.Errorf("%s: New = %v", name, err)
		}
	}
	p, hs := acceptancePlan(t, plan.AcceptanceStrict, newFakeProvider(StrictGuarantees))
	if _, err := New(Config{Plan: p, RunID: "r", Surface: plan.SurfaceDirect, Handlers: hs}); err != nil {
		t.Fatalf("a full provider: %v", err)
	}
	// no_blind_retry takes any handler.
	p, hs = acceptancePlan(t, plan.AcceptanceNoBlindRetry, &counting{})
	if _, err := New(Config{Plan: p, RunID: "r", Surface: plan.SurfaceDirect, Handlers: hs}); err != nil {
		t.Fatalf("no_blind_retry: %v", err)
	}
}

func TestStrictCommitReferencesTheProviderReceipt(t *testing.T) {
	fp := newFakeProvider(StrictGuarantees)
	p, hs := acceptancePlan(t, plan.AcceptanceStrict, fp)
	j := newMemJournal()
	b := acceptanceBroker(t, p, hs, j)
	d := decode(t, b.Call(context.Background(), frameOf("capability-1", "store", `{"v":1}`)))
	if d.Status != StatusOK || string(d.Result) != `{"stored":{"v":1}}` {
		t.Fatalf("strict commit: %+v", d)
	}
	r := b.Receipts()[0]
	want := fp.decisions[fp.bindings[0].EffectID].projection.ReceiptSHA256
	if r.ProviderReceiptSHA256 != want || VerifyReceipts(p.Identity(), "run-keyed", MarshalReceipts(b.Receipts())) != nil {
		t.Fatalf("receipt %+v, want provider receipt %s", r, want)
	}
	if c := j.calls["capability-1"].completion; c.Projection == nil || c.Projection.ReceiptSHA256 != want {
		t.Fatalf("journal projection: %+v", c.Projection)
	}
	if accepts, _, effects, calls := fp.count(); accepts != 1 || effects != 1 || calls != 0 {
		t.Fatalf("accepts %d effects %d calls %d", accepts, effects, calls)
	}
}

func TestStrictAcceptOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name         string
		setup        func(*fakeProvider)
		status, code string
		providerRef  bool
	}{
		{"rejected", func(p *fakeProvider) { p.reject = true }, StatusDenied, CodeProviderRejected, true},
		{"conflict", func(p *fakeProvider) { p.answer = AcceptConflict }, StatusDenied, CodeProviderConflict, false},
		{"presentation rejected", func(p *fakeProvider) { p.answer = AcceptPresentationRejected }, StatusError, CodeProviderPresentationRejected, false},
		{"epoch rejected", func(p *fakeProvider) { p.answer = AcceptEpochRejected }, StatusDenied, CodeProviderEpochRejected, false},
		{"unknown kind", func(p *fakeProvider) { p.answer = "maybe" }, StatusAmbiguous, CodeProviderAnswerInvalid, false},
		{"committed without its result", func(p *fakeProvider) { p.compacted = true }, StatusAmbiguous, CodeProviderResultCompacted, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp := newFakeProvider(StrictGuarantees)
			tc.setup(fp)
			p, hs := acceptancePlan(t, plan.AcceptanceStrict, fp)
			b := acceptanceBroker(t, p, hs, nil)
			d := decode(t, b.Call(context.Background(), frameOf("capability-1", "store", `{}`)))
			if d.Status != tc.status || d.ErrorCode != tc.code || d.Result != nil {
				t.Fatalf("got %+v", d)
			}
			if r := b.Receipts()[0]; (r.ProviderReceiptSHA256 != "") != tc.providerRef {
				t.Fatalf("receipt provider reference %q", r.ProviderReceiptSHA256)
			}
			if accepts, _, effects, _ := fp.count(); accepts != 1 || effects != 0 && !fp.compacted {
				t.Fatalf("accepts %d effects %d", accepts, effects)
			}
		})
	}
}

// TestStrictLostResponseIsReadBack: the provider commits and the response
// is lost; the Broker queries and answers with the committed result.
func TestStrictLostResponseIsReadBack(t *testing.T) {
	fp := newFakeProvider(StrictGuarantees)
	fp.lose = 1
	p, hs := acceptancePlan(t, plan.AcceptanceStrict, fp)
	b := acceptanceBroker(t, p, hs, nil)
	d := decode(t, b.Call(context.Background(), frameOf("capability-1", "store", `{"v":2}`)))
	if d.Status != StatusOK || string(d.Result) != `{"stored":{"v":2}}` {
		t.Fatalf("got %+v", d)
	}
	if accepts, queries, effects, _ := fp.count(); accepts != 1 || queries != 1 || effects != 1 {
		t.Fatalf("accepts %d queries %d effects %d", accepts, queries, effects)
	}
	if b.Receipts()[0].ProviderReceiptSHA256 == "" {
		t.Fatal("no provider receipt reference")
	}
}

// TestReconciliation: a call whose first attempt ended unknown (response
// lost, provider unreadable) is reconciled in the next attempt of the
// keyed run: found, the same receipt reference and no new effect; absent,
// exactly one retry; unavailable, still unknown.
func TestReconciliation(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		first                  func(*fakeProvider) // how the first attempt loses the outcome
		second                 func(*fakeProvider)
		status, code           string
		accepts, effects       int // after both attempts
		sameRef, journalUnknwn bool
	}{
		{"found", func(p *fakeProvider) { p.lose = 1 }, nil, StatusOK, "", 1, 1, true, false},
		{"absent", func(p *fakeProvider) { p.failBefore = 1 }, nil, StatusOK, "", 2, 1, false, false},
		{"unavailable", func(p *fakeProvider) { p.lose = 1 }, func(p *fakeProvider) { p.unreadable = true }, StatusAmbiguous, CodeDispatchUnknown, 1, 1, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp := newFakeProvider(StrictGuarantees)
			p, hs := acceptancePlan(t, plan.AcceptanceStrict, fp)
			j := newMemJournal()

			fp.unreadable = true
			tc.first(fp)
			d := decode(t, acceptanceBroker(t, p, hs, j).Call(context.Background(), frameOf("capability-1", "store", `{"v":3}`)))
			if d.Status != StatusAmbiguous || d.ErrorCode != CodeDispatchUnknown {
				t.Fatalf("first attempt: %+v", d)
			}
			if j.state("capability-1") != JournalUnknown {
				t.Fatal("an unknown call was completed in the journal")
			}

			fp.unreadable = false
			if tc.second != nil {
				tc.second(fp)
			}
			b := acceptanceBroker(t, p, hs, j)
			d = decode(t, b.Call(context.Background(), frameOf("capability-1", "store", `{"v":3}`)))
			if d.Status != tc.status || d.ErrorCode != tc.code {
				t.Fatalf("second attempt: %+v", d)
			}
			accepts, _, effects, _ := fp.count()
			if accepts != tc.accepts || effects != tc.effects {
				t.Fatalf("accepts %d (want %d), effects %d (want %d)", accepts, tc.accepts, effects, tc.effects)
			}
			if (j.state("capability-1") == JournalUnknown) != tc.journalUnknwn {
				t.Fatalf("journal state %s", j.state("capability-1"))
			}
			ref := b.Receipts()[0].ProviderReceiptSHA256
			if want := fp.decisions[fp.bindings[0].EffectID].projection.ReceiptSHA256; tc.status == StatusOK && ref != want {
				t.Fatalf("receipt reference %q, want %q", ref, want)
			}
			if tc.status != StatusOK {
				return
			}
			// A third attempt replays the recorded call: the same reference.
			b = acceptanceBroker(t, p, hs, j)
			d = decode(t, b.Call(context.Background(), frameOf("capability-1", "store", `{"v":3}`)))
			r := b.Receipts()[0]
			if d.Status != StatusOK || !r.Replayed || r.ProviderReceiptSHA256 != ref {
				t.Fatalf("replay: %+v %+v", d, r)
			}
			if a, _, e, _ := fp.count(); a != tc.accepts || e != tc.effects {
				t.Fatal("the replay reached the provider")
			}
		})
	}
}

// TestNoBlindRetryDispatchesOnce: whatever is lost, the call reaches its
// handler once; only a read back resolves it.
func TestNoBlindRetryDispatchesOnce(t *testing.T) {
	t.Run("handler without readback", func(t *testing.T) {
		h := &counting{err: errors.New("timeout")}
		p, hs := acceptancePlan(t, plan.AcceptanceNoBlindRetry, h)
		j := newMemJournal()
		for attempt := 0; attempt < 2; attempt++ {
			d := decode(t, acceptanceBroker(t, p, hs, j).Call(context.Background(), frameOf("capability-1", "store", `{}`)))
			if d.Status != StatusAmbiguous || d.ErrorCode != CodeDispatchUnknown {
				t.Fatalf("attempt %d: %+v", attempt, d)
			}
		}
		if h.n.Load() != 1 {
			t.Fatalf("dispatched %d times", h.n.Load())
		}
	})
	for _, tc := range []struct {
		name         string
		setup        func(*fakeProvider)
		status, code string
		queries      int
	}{
		{"provider without readback", func(p *fakeProvider) { p.lose, p.profile.Readback = 1, false }, StatusAmbiguous, CodeDispatchUnknown, 0},
		{"read back: found", func(p *fakeProvider) { p.lose = 1 }, StatusOK, "", 1},
		{"read back: absent", func(p *fakeProvider) { p.failBefore = 1 }, StatusAmbiguous, CodeDispatchUnknown, 1},
		{"read back: unavailable", func(p *fakeProvider) { p.lose, p.unreadable = 1, true }, StatusAmbiguous, CodeDispatchUnknown, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp := newFakeProvider(nil)
			tc.setup(fp)
			p, hs := acceptancePlan(t, plan.AcceptanceNoBlindRetry, fp)
			d := decode(t, acceptanceBroker(t, p, hs, nil).Call(context.Background(), frameOf("capability-1", "store", `{}`)))
			if d.Status != tc.status || d.ErrorCode != tc.code {
				t.Fatalf("got %+v", d)
			}
			if accepts, queries, _, _ := fp.count(); accepts != 1 || queries != tc.queries {
				t.Fatalf("accepts %d queries %d", accepts, queries)
			}
		})
	}
}

// TestAcceptanceOffUsesCall: a Provider under a capability without an
// acceptance requirement is an ordinary handler.
func TestAcceptanceOffUsesCall(t *testing.T) {
	fp := newFakeProvider(StrictGuarantees)
	p, hs := acceptancePlan(t, "", fp)
	b := acceptanceBroker(t, p, hs, nil)
	if d := decode(t, b.Call(context.Background(), frameOf("capability-1", "store", `{}`))); d.Status != StatusOK {
		t.Fatalf("got %+v", d)
	}
	if accepts, queries, _, calls := fp.count(); accepts != 0 || queries != 0 || calls != 1 {
		t.Fatalf("accepts %d queries %d calls %d", accepts, queries, calls)
	}
	if b.Receipts()[0].ProviderReceiptSHA256 != "" {
		t.Fatal("a provider reference without acceptance")
	}
}

// revokingProvider is a fakeProvider that also revokes.
type revokingProvider struct {
	*fakeProvider
	revoked []string
	fail    bool
}

func (p *revokingProvider) Revoke(_ context.Context, policySHA256 string) (string, error) {
	if p.fail {
		return "", errors.New("store is read-only")
	}
	p.revoked = append(p.revoked, policySHA256)
	return canonjson.PlainDigest([]byte("revoked " + policySHA256)), nil
}

func TestRevokeGrant(t *testing.T) {
	rp := &revokingProvider{fakeProvider: newFakeProvider(StrictGuarantees)}
	p, hs := acceptancePlan(t, plan.AcceptanceStrict, rp)
	rev, err := RevokeGrant(context.Background(), p, hs, "store")
	policy := p.Grants()[0].PolicySHA256
	if err != nil || rev.PolicySHA256 != policy || len(rp.revoked) != 1 || rp.revoked[0] != policy ||
		rev.PolicyOrderReceiptSHA256 != canonjson.PlainDigest([]byte("revoked "+policy)) {
		t.Fatalf("RevokeGrant = %+v, %v (revoked %v)", rev, err, rp.revoked)
	}
	rp.fail = true
	if _, err := RevokeGrant(context.Background(), p, hs, "store"); plan.CodeOf(err) != CodeRevocationFailed {
		t.Fatalf("a failing provider: %v", err)
	}
	if _, err := RevokeGrant(context.Background(), p, hs, "nope"); plan.CodeOf(err) != CodeUnknownCapability {
		t.Fatalf("an unknown capability: %v", err)
	}
	p, hs = acceptancePlan(t, "", &counting{})
	if _, err := RevokeGrant(context.Background(), p, hs, "store"); plan.CodeOf(err) != CodeGrantNotRevocable {
		t.Fatalf("a handler that cannot revoke: %v", err)
	}
}
