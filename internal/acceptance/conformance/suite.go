// Package conformance is the provider effect acceptance RFC's section 9
// matrix as a test suite (docs/acceptance.md): every row runs against
// a Harness, so any broker.Provider (the strict kv handler in this
// process or in provider processes, an exec provider tool) can be
// qualified by the same tests. It never decides what a Broker does; it
// checks what a provider answers and what it commits.
package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/plan"
)

// Principal names a caller of the provider. Alice and Bob hold the same
// grant in different tenants; Mallory shares Alice's tenant and subject
// with another credential (another sender) and another grant.
type Principal string

const (
	Alice   Principal = "alice"
	Bob     Principal = "bob"
	Mallory Principal = "mallory"
)

// Control stops a provider (process) at a transaction boundary: KillAt
// kills it there (SIGKILL: no deferred cleanup runs); Barrier makes it wait.
type Control struct {
	KillAt  string
	Barrier *Barrier
}

// Barrier holds provider processes at a point until Release: each
// process creates Dir/<name>.ready at the point and waits for Dir/go.
type Barrier struct {
	Dir   string
	Point string
}

// At reports whether point is the barrier's ("*.start" matches the start
// of any operation).
func (b *Barrier) At(point string) bool {
	if rest, ok := strings.CutPrefix(b.Point, "*"); ok {
		return strings.HasSuffix(point, rest)
	}
	return point == b.Point
}

// Wait is what a provider process does at the barrier's point.
func (b *Barrier) Wait(name string) {
	os.WriteFile(filepath.Join(b.Dir, name+".ready"), nil, 0o600)
	for {
		if _, err := os.Stat(filepath.Join(b.Dir, "go")); err == nil {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Release waits until n processes are at the barrier, then lets them go
// at once.
func (b *Barrier) Release(t *testing.T, n int) {
	t.Helper()
	for {
		ready, _ := filepath.Glob(filepath.Join(b.Dir, "*.ready"))
		if len(ready) >= n {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := os.WriteFile(filepath.Join(b.Dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Harness is a provider under test on one fresh store.
type Harness interface {
	// Provider opens the provider as a principal; with a Control, the
	// provider must run in a process of its own, stopped as it says.
	Provider(t *testing.T, as Principal, c Control) broker.Provider
	// Base is the binding's fields the provider owns for a principal:
	// capability, handler, policy and acceptance.
	Base(t *testing.T, as Principal) broker.EffectBinding
	// Args are the arguments of an effect that sets key to value; Denied
	// the arguments of one the provider's own policy denies.
	Args(key, value string) json.RawMessage
	Denied(value string) json.RawMessage
	// Observe reads the effect's state behind the provider's back.
	Observe(t *testing.T, key string) (value string, found bool)
	// Snapshot copies the store (never the epoch registry); the returned
	// function restores the copy.
	Snapshot(t *testing.T) (restore func())
	// Advance moves the provider's clock.
	Advance(d time.Duration)
	// Private are strings no projection or fixture may show: credentials,
	// local paths.
	Private() []string
}

// Maintainer is a provider's retention side.
type Maintainer interface {
	Compact(ctx context.Context) (int, error)
	RetireEpoch(ctx context.Context) (string, error)
}

// AcceptBoundaries are the points of the acceptance transaction a crash
// campaign stops at, in order; those from "accept.committed" on are
// after the commit.
var AcceptBoundaries = []string{"accept.start", "accept.begin", "accept.reserved", "accept.applied", "accept.recorded",
	"accept.committed", "accept.fenced", "accept.returned"}

// committedFrom is the first boundary after the commit.
const committedFrom = 5

// Run runs every row of the matrix, each on a fresh harness.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	rows := []struct {
		name string
		fn   func(*suite, *testing.T)
	}{
		{"profile", (*suite).profile},
		{"exact_binding", (*suite).exactBinding},
		{"single_use", (*suite).singleUse},
		{"exact_replay_concurrent", (*suite).exactReplay},
		{"crash_atomicity", (*suite).crashAtomicity},
		{"crash_maintenance", (*suite).crashMaintenance},
		{"response_loss", (*suite).responseLoss},
		{"authoritative_absence", (*suite).absence},
		{"revocation_first", (*suite).revocationFirst},
		{"acceptance_first", (*suite).acceptanceFirst},
		{"concurrent_revocation", (*suite).concurrentRevocation},
		{"security_context_isolation", (*suite).contextIsolation},
		{"sender_isolation", (*suite).senderIsolation},
		{"trusted_denial_replay", (*suite).denialReplay},
		{"retention", (*suite).retention},
		{"restore_fence", (*suite).restoreFence},
		{"weaker_mode_unknown", (*suite).weakerMode},
	}
	rec := &recorder{}
	// Rows run in parallel, each on its own store: most of a row's time
	// is provider processes starting.
	t.Run("rows", func(t *testing.T) {
		for _, row := range rows {
			t.Run(row.name, func(t *testing.T) {
				t.Parallel()
				s := &suite{ctx: context.Background(), newHarness: newHarness, rec: rec}
				s.h = s.fresh(t)
				row.fn(s, t)
			})
		}
	})
	t.Run("privacy", func(t *testing.T) { privacy(t, rec.seen, rec.private) })
}

// recorder keeps every projection and result the suite saw, and the
// private strings of every harness, for the privacy row.
type recorder struct {
	mu      sync.Mutex
	seen    []string
	private []string
}

type suite struct {
	h          Harness
	ctx        context.Context
	newHarness func(*testing.T) Harness
	rec        *recorder
}

// fresh is a new harness (a new store) for a row or a subtest.
func (s *suite) fresh(t *testing.T) Harness {
	h := s.newHarness(t)
	s.rec.mu.Lock()
	s.rec.private = append(s.rec.private, h.Private()...)
	s.rec.mu.Unlock()
	return h
}

// with is the suite on another harness.
func (s *suite) with(h Harness) *suite {
	c := *s
	c.h = h
	return &c
}

const planSHA = "sha256:5d41402abc4b2a76b9719d911017c592aa9b1c6c2d8e0d1f4e3a2b1c0d9e8f70"

// bind is the binding the Broker would seal for a call.
func (s *suite) bind(t *testing.T, p broker.Provider, as Principal, run, call string, args json.RawMessage) broker.EffectBinding {
	t.Helper()
	b := s.h.Base(t, as)
	canon, err := canonjson.Canonical(args)
	if err != nil {
		t.Fatal(err)
	}
	prof := p.Profile()
	b.RunID, b.PlanSHA256, b.CallID = run, planSHA, call
	b.RequestSHA256 = broker.RequestDigest(call, b.Capability, canon)
	b.ProviderID, b.ProviderEpoch = prof.ProviderID, prof.Epoch
	return b.Seal()
}

func (s *suite) record(v any) {
	raw, _ := json.Marshal(v)
	s.rec.mu.Lock()
	s.rec.seen = append(s.rec.seen, string(raw))
	s.rec.mu.Unlock()
}

func (s *suite) accept(t *testing.T, p broker.Provider, b broker.EffectBinding, args json.RawMessage) broker.AcceptResult {
	t.Helper()
	r, err := p.Accept(s.ctx, b, args)
	if err != nil {
		t.Fatalf("accept: %v", err)
	}
	s.record(r)
	return r
}

func (s *suite) query(t *testing.T, p broker.Provider, b broker.EffectBinding) broker.QueryResult {
	t.Helper()
	r, err := p.Query(s.ctx, b)
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	s.record(r)
	return r
}

// committed accepts a new effect and checks it committed.
func (s *suite) committed(t *testing.T, p broker.Provider, b broker.EffectBinding, args json.RawMessage) broker.AcceptResult {
	t.Helper()
	r := s.accept(t, p, b, args)
	if r.Kind != broker.AcceptTerminal || r.Replay || r.Projection == nil || r.Projection.Decision != broker.DecisionCommitted {
		t.Fatalf("accept = %+v, want a new committed decision", r)
	}
	return r
}

// replayed checks that an Accept is the exact replay of want.
func (s *suite) replayed(t *testing.T, p broker.Provider, b broker.EffectBinding, args json.RawMessage, want broker.AcceptResult) {
	t.Helper()
	r := s.accept(t, p, b, args)
	if r.Kind != broker.AcceptTerminal || !r.Replay || r.Projection == nil || *r.Projection != *want.Projection {
		t.Fatalf("replay = %+v, want the historical decision %+v", r, want.Projection)
	}
	if want.Result != nil && string(r.Result) != string(want.Result) {
		t.Fatalf("replay result %s, want %s", r.Result, want.Result)
	}
}

func (s *suite) observe(t *testing.T, key, want string, wantFound bool) {
	t.Helper()
	v, found := s.h.Observe(t, key)
	if found != wantFound || (found && v != want) {
		t.Fatalf("effect state of %s = %q (found %v), want %q (found %v)", key, v, found, want, wantFound)
	}
}

func value(v string) string { return `"` + v + `"` }

func (s *suite) profile(t *testing.T) {
	p := s.h.Provider(t, Alice, Control{})
	prof := p.Profile()
	if m := prof.Missing(); len(m) != 0 || !prof.Readback || prof.RetentionSeconds <= 0 || prof.ProviderID == "" || prof.Epoch == "" {
		t.Fatalf("profile %+v (missing %v): a strict provider declares every guarantee, readback and a retention", prof, m)
	}
	// Strict compatibility, at the profile: any guarantee left out is
	// reported missing, which refuses strict work before dispatch.
	for i, g := range broker.StrictGuarantees {
		weaker := prof
		weaker.Guarantees = append(append([]broker.Guarantee(nil), prof.Guarantees[:i]...), prof.Guarantees[i+1:]...)
		if m := weaker.Missing(); len(m) != 1 || m[0] != g {
			t.Errorf("without %s: missing %v", g, m)
		}
	}
}

// exactBinding changes each bound field of a committed call: never a new
// effect, the original unchanged and replayable.
func (s *suite) exactBinding(t *testing.T) {
	p := s.h.Provider(t, Alice, Control{})
	args := s.h.Args("k0", value("v0"))
	orig := s.bind(t, p, Alice, "run-1", "capability-1", args)
	first := s.committed(t, p, orig, args)
	mutations := map[string]func(*broker.EffectBinding){
		"run_id":              func(b *broker.EffectBinding) { b.RunID = "run-2" },
		"plan_sha256":         func(b *broker.EffectBinding) { b.PlanSHA256 = strings.Replace(b.PlanSHA256, "5d", "6d", 1) },
		"call_id":             func(b *broker.EffectBinding) { b.CallID = "capability-2" },
		"capability":          func(b *broker.EffectBinding) { b.Capability += "x" },
		"handler":             func(b *broker.EffectBinding) { b.Handler.Version = "2" },
		"policy_sha256":       func(b *broker.EffectBinding) { b.PolicySHA256 = planSHA },
		"approval_request_id": func(b *broker.EffectBinding) { b.ApprovalRequestID = "approval-9" },
		"request_sha256":      func(b *broker.EffectBinding) { b.RequestSHA256 = planSHA },
		"acceptance":          func(b *broker.EffectBinding) { b.Acceptance = plan.AcceptanceNoBlindRetry },
		"provider_id":         func(b *broker.EffectBinding) { b.ProviderID += "x" },
		"provider_epoch":      func(b *broker.EffectBinding) { b.ProviderEpoch += "0" },
		"effect_id":           func(b *broker.EffectBinding) { b.EffectID = planSHA },
		"authorization_id":    func(b *broker.EffectBinding) { b.AuthorizationID = planSHA },
		"binding_sha256":      func(b *broker.EffectBinding) { b.BindingSHA256 = planSHA },
	}
	for field, mutate := range mutations {
		// Changed and not sealed again: the provider's recomputation differs.
		b := orig
		mutate(&b)
		if r := s.accept(t, p, b, args); r.Kind != broker.AcceptPresentationRejected {
			t.Errorf("%s changed: %+v, want presentation_rejected", field, r)
		}
		// Changed and sealed again, where the identities stay those of
		// the original (run and call make another call): rejected or a
		// conflict, never a new decision.
		if field == "run_id" || field == "call_id" || field == "effect_id" || field == "authorization_id" || field == "binding_sha256" {
			continue
		}
		resealed := b.Seal()
		if r := s.accept(t, p, resealed, args); r.Kind == broker.AcceptTerminal {
			t.Errorf("%s changed and sealed: %+v, want a rejection or a conflict", field, r)
		}
	}
	// Other arguments under the original binding, and sealed into it.
	other := s.h.Args("k0", value("v1"))
	if r := s.accept(t, p, orig, other); r.Kind != broker.AcceptPresentationRejected {
		t.Errorf("other arguments: %+v", r)
	}
	otherBinding := s.bind(t, p, Alice, "run-1", "capability-1", other)
	if r := s.accept(t, p, otherBinding, other); r.Kind != broker.AcceptConflict {
		t.Errorf("other arguments sealed: %+v, want conflict", r)
	}
	s.observe(t, "k0", value("v0"), true)
	s.replayed(t, p, orig, args, first)
}

// singleUse races two effects that share one authorization.
func (s *suite) singleUse(t *testing.T) {
	probe := s.h.Provider(t, Alice, Control{})
	var bs [2]broker.EffectBinding
	var as [2]json.RawMessage
	for i := range bs {
		as[i] = s.h.Args(fmt.Sprintf("single-%d", i), value("v"))
		bs[i] = s.bind(t, probe, Alice, "run-1", "capability-1", as[i])
		bs[i].PlanSHA256 = strings.Replace(planSHA, "5d", fmt.Sprintf("%02d", i), 1) // another Plan: another effect, one authorization
		bs[i] = bs[i].Seal()
	}
	if bs[0].AuthorizationID != bs[1].AuthorizationID || bs[0].EffectID == bs[1].EffectID {
		t.Fatal("the two calls must share the authorization and not the effect")
	}
	results := s.parallel(t, 2, func(i int, p broker.Provider) broker.AcceptResult { return s.accept(t, p, bs[i], as[i]) })
	terminal, conflict := 0, 0
	for _, r := range results {
		switch {
		case r.Kind == broker.AcceptTerminal && !r.Replay:
			terminal++
		case r.Kind == broker.AcceptConflict:
			conflict++
		}
	}
	if terminal != 1 || conflict != 1 {
		t.Fatalf("results %+v: want one decision and one conflict", results)
	}
	_, found0 := s.h.Observe(t, "single-0")
	_, found1 := s.h.Observe(t, "single-1")
	if found0 == found1 {
		t.Fatalf("effects: %v %v, want exactly one", found0, found1)
	}
}

// parallel runs n calls at once, each on a provider of its own (a
// process of its own where the harness has them), released together.
func (s *suite) parallel(t *testing.T, n int, call func(i int, p broker.Provider) broker.AcceptResult) []broker.AcceptResult {
	t.Helper()
	barrier := &Barrier{Dir: t.TempDir(), Point: "accept.start"}
	ps := make([]broker.Provider, n)
	for i := range ps {
		ps[i] = s.h.Provider(t, Alice, Control{Barrier: barrier})
	}
	out := make([]broker.AcceptResult, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = call(i, ps[i])
		}()
	}
	barrier.Release(t, n)
	wg.Wait()
	return out
}

// exactReplay races identical calls, then replays after a later effect.
func (s *suite) exactReplay(t *testing.T) {
	p := s.h.Provider(t, Alice, Control{})
	args := s.h.Args("k", value("v1"))
	b := s.bind(t, p, Alice, "run-1", "capability-1", args)
	results := s.parallel(t, 3, func(_ int, p broker.Provider) broker.AcceptResult { return s.accept(t, p, b, args) })
	fresh := 0
	for _, r := range results {
		if r.Kind != broker.AcceptTerminal || r.Projection.ReceiptSHA256 != results[0].Projection.ReceiptSHA256 {
			t.Fatalf("results %+v: want one receipt", results)
		}
		if !r.Replay {
			fresh++
		}
	}
	if fresh != 1 {
		t.Fatalf("%d new decisions, want 1", fresh)
	}
	later := s.h.Args("k", value("v2"))
	s.committed(t, p, s.bind(t, p, Alice, "run-1", "capability-2", later), later)
	s.replayed(t, p, b, args, results[0])
	s.observe(t, "k", value("v2"), true) // the replay applied nothing
}

// crashAtomicity kills the provider process at each boundary of the
// acceptance transaction: after a restart the call is either wholly
// absent (no identity, no effect, no receipt) or wholly decided.
func (s *suite) crashAtomicity(t *testing.T) {
	for i, point := range AcceptBoundaries {
		t.Run(point, func(t *testing.T) {
			h := s.fresh(t)
			s := s.with(h)
			p := h.Provider(t, Alice, Control{})
			args := h.Args("crash", value("v"))
			b := s.bind(t, p, Alice, "run-1", "capability-1", args)
			if _, err := h.Provider(t, Alice, Control{KillAt: point}).Accept(s.ctx, b, args); err == nil {
				t.Fatalf("the provider process was to die at %s", point)
			}
			q := s.query(t, p, b)
			_, effect := h.Observe(t, "crash")
			switch {
			case i < committedFrom && (q.Kind != broker.QueryAbsent || effect):
				t.Fatalf("killed at %s before the commit: query %+v, effect %v; want absent and no effect", point, q, effect)
			case i >= committedFrom && (q.Kind != broker.QueryFound || !effect || q.Projection.Decision != broker.DecisionCommitted):
				t.Fatalf("killed at %s after the commit: query %+v, effect %v; want found with its effect", point, q, effect)
			}
			r := s.accept(t, p, b, args)
			if r.Kind != broker.AcceptTerminal || r.Replay != (i >= committedFrom) {
				t.Fatalf("retry after a kill at %s: %+v", point, r)
			}
			if q.Kind == broker.QueryFound && *q.Projection != *r.Projection {
				t.Fatalf("query and replay differ: %+v %+v", q.Projection, r.Projection)
			}
			s.observe(t, "crash", value("v"), true)
		})
	}
	// A revocation killed before and after its commit.
	for _, point := range []string{"revoke.begin", "revoke.committed"} {
		t.Run(point, func(t *testing.T) {
			h := s.fresh(t)
			s := s.with(h)
			p := h.Provider(t, Alice, Control{})
			killed := h.Provider(t, Alice, Control{KillAt: point}).(broker.Revoker)
			if _, err := killed.Revoke(s.ctx, h.Base(t, Alice).PolicySHA256); err == nil {
				t.Fatalf("the provider process was to die at %s", point)
			}
			args := h.Args("after-revoke", value("v"))
			r := s.accept(t, p, s.bind(t, p, Alice, "run-1", "capability-1", args), args)
			revoked := r.Projection != nil && r.Projection.Decision == broker.DecisionRejected
			if revoked != (point == "revoke.committed") {
				t.Fatalf("after a kill at %s: %+v", point, r)
			}
		})
	}
}

// crashMaintenance kills compaction and epoch retirement around their
// commits: a decision is found, a tombstone or its epoch retired, never
// absent, and a replay never applies anything.
func (s *suite) crashMaintenance(t *testing.T) {
	for _, point := range []string{"compact.begin", "compact.committed", "retire.begin", "retire.registered", "retire.committed"} {
		t.Run(point, func(t *testing.T) {
			h := s.fresh(t)
			s := s.with(h)
			p := h.Provider(t, Alice, Control{})
			args := h.Args("kept", value("v1"))
			b := s.bind(t, p, Alice, "run-1", "capability-1", args)
			first := s.committed(t, p, b, args)
			h.Advance(time.Duration(p.Profile().RetentionSeconds+1) * time.Second)
			killed := h.Provider(t, Alice, Control{KillAt: point}).(Maintainer)
			var err error
			if strings.HasPrefix(point, "compact") {
				_, err = killed.Compact(s.ctx)
			} else {
				_, err = killed.RetireEpoch(s.ctx)
			}
			if err == nil {
				t.Fatalf("the provider process was to die at %s", point)
			}
			later := h.Args("kept", value("v2"))
			restarted := h.Provider(t, Alice, Control{})
			s.committed(t, restarted, s.bind(t, restarted, Alice, "run-2", "capability-1", later), later)
			q := s.query(t, restarted, b)
			want := map[string]string{"compact.begin": broker.QueryFound, "compact.committed": broker.QueryTombstone,
				"retire.begin": broker.QueryFound}[point]
			if want == "" {
				want = broker.QueryEpochRetired
			}
			if q.Kind != want {
				t.Fatalf("query after a kill at %s: %+v, want %s", point, q, want)
			}
			r := s.accept(t, restarted, b, args)
			if want == broker.QueryEpochRetired {
				if r.Kind != broker.AcceptEpochRejected {
					t.Fatalf("old epoch after a kill at %s: %+v", point, r)
				}
			} else if r.Kind != broker.AcceptTerminal || !r.Replay || *r.Projection != *first.Projection {
				t.Fatalf("replay after a kill at %s: %+v", point, r)
			}
			s.observe(t, "kept", value("v2"), true)
		})
	}
}

// responseLoss: the provider commits and its process dies before it
// answers; after a restart, query and replay give the same receipt, and
// recovery applies nothing.
func (s *suite) responseLoss(t *testing.T) {
	p := s.h.Provider(t, Alice, Control{})
	args := s.h.Args("lost", value("v1"))
	b := s.bind(t, p, Alice, "run-1", "capability-1", args)
	if _, err := s.h.Provider(t, Alice, Control{KillAt: "accept.returned"}).Accept(s.ctx, b, args); err == nil {
		t.Fatal("the provider process was to die before answering")
	}
	later := s.h.Args("lost", value("v2"))
	s.committed(t, p, s.bind(t, p, Alice, "run-1", "capability-2", later), later)
	restarted := s.h.Provider(t, Alice, Control{})
	q := s.query(t, restarted, b)
	if q.Kind != broker.QueryFound || q.Projection.Decision != broker.DecisionCommitted {
		t.Fatalf("query after the loss: %+v", q)
	}
	s.replayed(t, restarted, b, args, broker.AcceptResult{Projection: q.Projection, Result: q.Result})
	s.observe(t, "lost", value("v2"), true)
}

// absence: absent only from a linearised read; a query racing the
// acceptance sees absent (and the acceptance then decides) or the decision.
func (s *suite) absence(t *testing.T) {
	p := s.h.Provider(t, Alice, Control{})
	args := s.h.Args("absent", value("v"))
	b := s.bind(t, p, Alice, "run-1", "capability-1", args)
	q := s.query(t, p, b)
	if q.Kind != broker.QueryAbsent || !canonjson.IsDigest(q.AbsenceSHA256) {
		t.Fatalf("query before acceptance: %+v, want absent with a witness", q)
	}
	s.observe(t, "absent", "", false)
	var wg sync.WaitGroup
	var raced broker.QueryResult
	wg.Add(1)
	go func() {
		defer wg.Done()
		r, err := s.h.Provider(t, Alice, Control{}).Query(s.ctx, b)
		if err == nil {
			raced = r
		}
	}()
	r := s.committed(t, p, b, args)
	wg.Wait()
	switch raced.Kind {
	case broker.QueryAbsent:
	case broker.QueryFound:
		if *raced.Projection != *r.Projection {
			t.Fatalf("raced query found another decision")
		}
	default:
		t.Fatalf("raced query: %+v", raced)
	}
	if q := s.query(t, p, b); q.Kind != broker.QueryFound || *q.Projection != *r.Projection {
		t.Fatalf("query after acceptance: %+v", q)
	}
}

func (s *suite) revoke(t *testing.T, p broker.Provider) string {
	t.Helper()
	receipt, err := p.(broker.Revoker).Revoke(s.ctx, s.h.Base(t, Alice).PolicySHA256)
	if err != nil || !canonjson.IsDigest(receipt) {
		t.Fatalf("revoke: %q %v", receipt, err)
	}
	return receipt
}

func (s *suite) revocationFirst(t *testing.T) {
	p := s.h.Provider(t, Alice, Control{})
	revocation := s.revoke(t, p)
	args := s.h.Args("revoked", value("v"))
	r := s.accept(t, p, s.bind(t, p, Alice, "run-1", "capability-1", args), args)
	if r.Kind != broker.AcceptTerminal || r.Projection.Decision != broker.DecisionRejected || r.Projection.Reason != "revoked" ||
		r.Projection.PolicyOrderReceiptSHA256 != revocation || r.Result != nil {
		t.Fatalf("accept after revocation: %+v", r)
	}
	s.observe(t, "revoked", "", false)
}

func (s *suite) acceptanceFirst(t *testing.T) {
	p := s.h.Provider(t, Alice, Control{})
	args := s.h.Args("first", value("v"))
	b := s.bind(t, p, Alice, "run-1", "capability-1", args)
	first := s.committed(t, p, b, args)
	revocation := s.revoke(t, p)
	s.replayed(t, p, b, args, first) // the committed decision stands
	next := s.h.Args("second", value("v"))
	r := s.accept(t, p, s.bind(t, p, Alice, "run-1", "capability-2", next), next)
	if r.Projection == nil || r.Projection.Reason != "revoked" || r.Projection.PolicyOrderReceiptSHA256 != revocation ||
		seq(t, r.Projection.Sequence) <= seq(t, first.Projection.Sequence) {
		t.Fatalf("after the revocation: %+v (first %+v)", r.Projection, first.Projection)
	}
	s.observe(t, "first", value("v"), true)
	s.observe(t, "second", "", false)
}

func seq(t *testing.T, s string) uint64 {
	t.Helper()
	var n uint64
	if _, err := fmt.Sscanf(s, "uint:%d", &n); err != nil {
		t.Fatalf("sequence %q", s)
	}
	return n
}

// concurrentRevocation releases an acceptance and a revocation at one
// barrier: whichever the provider orders first, the receipts say so.
func (s *suite) concurrentRevocation(t *testing.T) {
	for round := range 3 {
		h := s.h
		if round > 0 {
			h = s.fresh(t)
		}
		s := s.with(h)
		barrier := &Barrier{Dir: t.TempDir(), Point: "*.start"}
		probe := h.Provider(t, Alice, Control{})
		args := h.Args("race", value("v"))
		b := s.bind(t, probe, Alice, "run-1", "capability-1", args)
		acceptor := h.Provider(t, Alice, Control{Barrier: barrier})
		revoker := h.Provider(t, Alice, Control{Barrier: barrier}).(broker.Revoker)
		var wg sync.WaitGroup
		var revocation string
		var revokeErr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			revocation, revokeErr = revoker.Revoke(s.ctx, h.Base(t, Alice).PolicySHA256)
		}()
		var r broker.AcceptResult
		var acceptErr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, acceptErr = acceptor.Accept(s.ctx, b, args)
		}()
		barrier.Release(t, 2)
		wg.Wait()
		if revokeErr != nil || acceptErr != nil || r.Kind != broker.AcceptTerminal {
			t.Fatalf("round %d: %v %v %+v", round, revokeErr, acceptErr, r)
		}
		_, effect := h.Observe(t, "race")
		switch r.Projection.Decision {
		case broker.DecisionRejected: // the revocation came first
			if r.Projection.Reason != "revoked" || r.Projection.PolicyOrderReceiptSHA256 != revocation || effect {
				t.Fatalf("round %d: rejected %+v, effect %v", round, r.Projection, effect)
			}
		case broker.DecisionCommitted: // the acceptance came first
			if r.Projection.PolicyOrderReceiptSHA256 == revocation || !effect {
				t.Fatalf("round %d: committed %+v citing the later revocation, effect %v", round, r.Projection, effect)
			}
			next := h.Args("race-2", value("v"))
			later := s.accept(t, probe, s.bind(t, probe, Alice, "run-1", "capability-2", next), next)
			if later.Projection.Reason != "revoked" || seq(t, later.Projection.Sequence) <= seq(t, r.Projection.Sequence) {
				t.Fatalf("round %d: the revocation is not ordered after the acceptance: %+v", round, later.Projection)
			}
		default:
			t.Fatalf("round %d: %+v", round, r.Projection)
		}
	}
}

// contextIsolation: Bob, in another tenant with the same grant, reuses
// Alice's run, Plan and call (the same effect and authorization ids).
func (s *suite) contextIsolation(t *testing.T) {
	alice, bob := s.h.Provider(t, Alice, Control{}), s.h.Provider(t, Bob, Control{})
	args := s.h.Args("shared", value("alice"))
	ba := s.bind(t, alice, Alice, "run-1", "capability-1", args)
	ra := s.committed(t, alice, ba, args)
	bargs := s.h.Args("shared-bob", value("bob"))
	bb := s.bind(t, bob, Bob, "run-1", "capability-1", bargs)
	bb2 := s.bind(t, bob, Bob, "run-1", "capability-1", args)
	if bb2.EffectID != ba.EffectID || bb2.AuthorizationID != ba.AuthorizationID {
		t.Fatal("Bob's call must reuse Alice's identifiers")
	}
	if q := s.query(t, bob, bb); q.Kind != broker.QueryAbsent {
		t.Fatalf("Bob reads Alice's decision: %+v", q)
	}
	rb := s.committed(t, bob, bb, bargs) // no conflict across contexts
	if rb.Projection.ReceiptSHA256 == ra.Projection.ReceiptSHA256 || rb.Projection.EffectIDSHA256 == ra.Projection.EffectIDSHA256 {
		t.Fatal("one receipt or identity key across security contexts")
	}
	if q := s.query(t, alice, ba); q.Kind != broker.QueryFound || *q.Projection != *ra.Projection {
		t.Fatalf("Alice's query: %+v", q)
	}
	if q := s.query(t, bob, bb); q.Kind != broker.QueryFound || *q.Projection != *rb.Projection {
		t.Fatalf("Bob's query: %+v", q)
	}
}

// senderIsolation: Mallory (same tenant and subject, another credential,
// not issued Alice's grant) presents Alice's authorization.
func (s *suite) senderIsolation(t *testing.T) {
	alice, mallory := s.h.Provider(t, Alice, Control{}), s.h.Provider(t, Mallory, Control{})
	args := s.h.Args("sender", value("v"))
	b := s.bind(t, alice, Alice, "run-1", "capability-1", args)
	if r := s.accept(t, mallory, b, args); r.Kind != broker.AcceptPresentationRejected {
		t.Fatalf("Mallory's presentation: %+v, want presentation_rejected", r)
	}
	s.observe(t, "sender", "", false)
	if q := s.query(t, mallory, b); q.Kind == broker.QueryFound || q.Kind == broker.QueryTombstone {
		t.Fatalf("Mallory's query: %+v", q)
	}
	s.committed(t, alice, b, args) // nothing was reserved or consumed
}

// denialReplay: a trusted denial is terminal and replays as it was.
func (s *suite) denialReplay(t *testing.T) {
	p := s.h.Provider(t, Alice, Control{})
	denied := s.h.Denied(value("v"))
	bd := s.bind(t, p, Alice, "run-1", "capability-1", denied)
	r := s.accept(t, p, bd, denied)
	if r.Kind != broker.AcceptTerminal || r.Projection.Decision != broker.DecisionRejected || r.Projection.Reason != "policy_denied" {
		t.Fatalf("denied: %+v", r)
	}
	args := s.h.Args("denied", value("v"))
	b := s.bind(t, p, Alice, "run-1", "capability-2", args)
	s.revoke(t, p)
	revoked := s.accept(t, p, b, args)
	if revoked.Projection == nil || revoked.Projection.Reason != "revoked" {
		t.Fatalf("revoked: %+v", revoked)
	}
	s.replayed(t, p, bd, denied, r)
	s.replayed(t, p, b, args, revoked)
	s.observe(t, "denied", "", false)
}

// retention: compact, restore a backup, retire the epoch, replay an old
// request: never a new effect, never absent for the old epoch.
func (s *suite) retention(t *testing.T) {
	p := s.h.Provider(t, Alice, Control{})
	args := s.h.Args("kept", value("v1"))
	b := s.bind(t, p, Alice, "run-1", "capability-1", args)
	first := s.committed(t, p, b, args)
	restore := s.h.Snapshot(t)
	s.h.Advance(time.Duration(p.Profile().RetentionSeconds+1) * time.Second)
	m := s.h.Provider(t, Alice, Control{}).(Maintainer)
	if n, err := m.Compact(s.ctx); err != nil || n != 1 {
		t.Fatalf("compact: %d %v", n, err)
	}
	if q := s.query(t, p, b); q.Kind != broker.QueryTombstone || q.Projection.ReceiptSHA256 != first.Projection.ReceiptSHA256 {
		t.Fatalf("query of a compacted decision: %+v", q)
	}
	later := s.h.Args("kept", value("v2"))
	s.committed(t, p, s.bind(t, p, Alice, "run-1", "capability-2", later), later)
	if r := s.accept(t, p, b, args); r.Kind != broker.AcceptTerminal || !r.Replay || *r.Projection != *first.Projection {
		t.Fatalf("replay of a tombstone: %+v", r)
	}
	s.observe(t, "kept", value("v2"), true)
	restore() // the backup predates the later call: the fence refuses it
	if _, err := s.h.Provider(t, Alice, Control{}).Accept(s.ctx, b, args); err == nil {
		t.Fatal("a store restored behind the fence answered")
	}
	epoch, err := s.h.Provider(t, Alice, Control{}).(Maintainer).RetireEpoch(s.ctx)
	if err != nil || epoch == b.ProviderEpoch {
		t.Fatalf("retire: %q %v", epoch, err)
	}
	p = s.h.Provider(t, Alice, Control{})
	if r := s.accept(t, p, b, args); r.Kind != broker.AcceptEpochRejected {
		t.Fatalf("old request after retirement: %+v", r)
	}
	if q := s.query(t, p, b); q.Kind != broker.QueryEpochRetired {
		t.Fatalf("old query after retirement: %+v, want epoch_retired", q)
	}
	s.observe(t, "kept", value("v1"), true) // the restored store's value; nothing new applied
}

// restoreFence: a store restored behind the registry answers nothing
// until the epoch is retired; the old epoch is then refused.
func (s *suite) restoreFence(t *testing.T) {
	p := s.h.Provider(t, Alice, Control{})
	argsA := s.h.Args("a", value("v"))
	ba := s.bind(t, p, Alice, "run-1", "capability-1", argsA)
	s.committed(t, p, ba, argsA)
	restore := s.h.Snapshot(t)
	argsB := s.h.Args("b", value("v"))
	bb := s.bind(t, p, Alice, "run-1", "capability-2", argsB)
	s.committed(t, p, bb, argsB)
	restore()
	p = s.h.Provider(t, Alice, Control{})
	if _, err := p.Accept(s.ctx, bb, argsB); err == nil {
		t.Fatal("a rolled-back store accepted a call")
	}
	if q, err := p.Query(s.ctx, bb); err == nil && q.Kind != broker.QueryUnavailable {
		t.Fatalf("a rolled-back store answered %+v", q)
	}
	s.observe(t, "b", "", false)
	if _, err := p.(Maintainer).RetireEpoch(s.ctx); err != nil {
		t.Fatal(err)
	}
	p = s.h.Provider(t, Alice, Control{})
	for _, c := range []struct {
		b    broker.EffectBinding
		args json.RawMessage
	}{{ba, argsA}, {bb, argsB}} {
		if r := s.accept(t, p, c.b, c.args); r.Kind != broker.AcceptEpochRejected {
			t.Fatalf("old epoch accepted: %+v", r)
		}
		if q := s.query(t, p, c.b); q.Kind != broker.QueryEpochRetired {
			t.Fatalf("old epoch query: %+v", q)
		}
	}
	s.observe(t, "b", "", false)
	argsC := s.h.Args("c", value("v"))
	s.committed(t, p, s.bind(t, p, Alice, "run-2", "capability-1", argsC), argsC)
}

// weakerMode: after a lost response, readback answers (one dispatch, no
// retry); a provider that cannot answer never says absent.
func (s *suite) weakerMode(t *testing.T) {
	p := s.h.Provider(t, Alice, Control{})
	args := s.h.Args("weak", value("v"))
	b := s.bind(t, p, Alice, "run-1", "capability-1", args)
	b.Acceptance = plan.AcceptanceNoBlindRetry
	b = b.Seal()
	// The harness's capability is strict: a no_blind_retry binding is not
	// one it serves, and is refused before anything is reserved.
	if r := s.accept(t, p, b, args); r.Kind != broker.AcceptPresentationRejected {
		t.Fatalf("%+v", r)
	}
	b = s.bind(t, p, Alice, "run-1", "capability-1", args)
	if _, err := s.h.Provider(t, Alice, Control{KillAt: "accept.committed"}).Accept(s.ctx, b, args); err == nil {
		t.Fatal("the provider process was to die")
	}
	if q := s.query(t, p, b); q.Kind != broker.QueryFound {
		t.Fatalf("readback after a lost response: %+v", q)
	}
	restore := s.h.Snapshot(t)
	more := s.h.Args("weak-2", value("v"))
	s.committed(t, p, s.bind(t, p, Alice, "run-1", "capability-2", more), more)
	restore()
	q, err := s.h.Provider(t, Alice, Control{}).Query(s.ctx, s.bind(t, p, Alice, "run-1", "capability-2", more))
	if err == nil && q.Kind != broker.QueryUnavailable {
		t.Fatalf("an unavailable provider answered %+v: the outcome must stay unknown", q)
	}
}

// privacy: no projection or result the suite saw shows a credential or
// a local path, and every projection field is a digest or a bounded token.
func privacy(t *testing.T, seen, private []string) {
	if len(seen) == 0 {
		t.Fatal("no projection was recorded")
	}
	for _, doc := range seen {
		for _, p := range private {
			if p != "" && strings.Contains(doc, p) {
				t.Errorf("a projection shows private material")
			}
		}
		var r struct {
			Projection *broker.DecisionProjection
		}
		if json.Unmarshal([]byte(doc), &r) != nil || r.Projection == nil {
			continue
		}
		pj := r.Projection
		for _, d := range []string{pj.ProviderRefSHA256, pj.EpochSHA256, pj.EffectIDSHA256, pj.AuthorizationIDSHA256,
			pj.BindingSHA256, pj.PolicyOrderReceiptSHA256, pj.ReceiptSHA256} {
			if !canonjson.IsDigest(d) {
				t.Errorf("projection field %q is not a digest", d)
			}
		}
		if len(pj.Reason) > 64 || strings.Trim(pj.Reason, "abcdefghijklmnopqrstuvwxyz_") != "" {
			t.Errorf("projection reason %q", pj.Reason)
		}
	}
}
