package journal

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/plan"
)

// recordingProvider commits every new effect once, by effect id; it can
// lose its response after committing and be unreadable.
type recordingProvider struct {
	mu         sync.Mutex
	decided    map[string]broker.DecisionProjection
	effects    int
	lose       bool
	unreadable bool
}

func (p *recordingProvider) Profile() broker.ProviderProfile {
	return broker.ProviderProfile{ProviderID: "rec", Epoch: "e1", Guarantees: broker.StrictGuarantees, Readback: true}
}

func (p *recordingProvider) Call(context.Context, json.RawMessage) (json.RawMessage, error) {
	return nil, errors.New("strict: Accept only")
}

func (p *recordingProvider) Accept(_ context.Context, b broker.EffectBinding, _ json.RawMessage) (broker.AcceptResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d, ok := p.decided[b.EffectID]
	if !ok {
		p.effects++
		d = broker.DecisionProjection{SchemaVersion: broker.DecisionProjectionSchema, BindingSHA256: b.BindingSHA256,
			Decision: broker.DecisionCommitted, Sequence: "uint:1", ReceiptSHA256: canonjson.PlainDigest([]byte(b.EffectID))}
		p.decided[b.EffectID] = d
	}
	if p.lose {
		return broker.AcceptResult{}, errors.New("response lost")
	}
	return broker.AcceptResult{Kind: broker.AcceptTerminal, Replay: ok, Projection: &d, Result: json.RawMessage(`{"ok":true}`)}, nil
}

func (p *recordingProvider) Query(_ context.Context, b broker.EffectBinding) (broker.QueryResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.unreadable {
		return broker.QueryResult{}, errors.New("unavailable")
	}
	d, ok := p.decided[b.EffectID]
	if !ok {
		return broker.QueryResult{Kind: broker.QueryAbsent, AbsenceSHA256: canonjson.PlainDigest([]byte("absent"))}, nil
	}
	return broker.QueryResult{Kind: broker.QueryFound, Projection: &d, Result: json.RawMessage(`{"ok":true}`)}, nil
}

// TestProviderCallAcrossAttempts: a strict call whose response is lost and
// whose provider cannot be read stays unknown in the journal, with the
// binding it was dispatched with; the next attempt reconciles it from
// that binding (no new effect) and records the provider's projection; the
// attempt after replays it with the same provider receipt reference.
// Verify checks the binding and the projection against the log.
func TestProviderCallAcrossAttempts(t *testing.T) {
	j := open(t, t.TempDir())
	pr := &recordingProvider{decided: map[string]broker.DecisionProjection{}, lose: true, unreadable: true}
	r, _ := plan.NewRegistry(4)
	id, _ := plan.NewHandlerIdentity("test", "rec", "1", nil)
	obj := json.RawMessage(`{"type":"object"}`)
	if err := r.Register(plan.Spec{Name: "act", Version: "1", Effect: plan.EffectWrite, Playback: plan.PlaybackLive, Handler: id,
		InputSchema: obj, OutputSchema: obj, Acceptance: plan.AcceptanceStrict}); err != nil {
		t.Fatal(err)
	}
	g, _ := plan.NewGrant(json.RawMessage(`{}`))
	_ = r.Bind("act", g)
	p, err := r.Seal()
	if err != nil {
		t.Fatal(err)
	}
	hs := broker.NewHandlers()
	_ = hs.Add(id, pr)
	attempt := func() (brokerResponse, broker.Receipt) {
		t.Helper()
		if _, err := j.db.Exec(`UPDATE runs SET owner = ?`, deadOwner); err != nil {
			t.Fatal(err)
		}
		if _, err := j.BeginRun(ctx, "k", fp, Owner()); err != nil {
			t.Fatal(err)
		}
		b, err := broker.New(broker.Config{Plan: p, RunID: "run-k", Surface: plan.SurfaceDirect, Handlers: hs, Journal: j.ForRun("k")})
		if err != nil {
			t.Fatal(err)
		}
		var resp brokerResponse
		_ = json.Unmarshal(b.Call(ctx, []byte(`{"call_id":"capability-1","capability":"act","arguments":{}}`)).AppendJSON(nil), &resp)
		return resp, b.Receipts()[0]
	}

	if got, _ := attempt(); got.ErrorCode != broker.CodeDispatchUnknown {
		t.Fatalf("attempt 1: %+v", got)
	}
	rec, _ := j.Call(ctx, "k", "capability-1")
	if rec.Answer() != Unknown || rec.Binding == nil {
		t.Fatalf("after attempt 1: %s, binding %s", rec.Answer(), rec.Binding)
	}

	pr.lose, pr.unreadable = false, false
	got, receipt := attempt()
	want := pr.decided[firstEffect(pr)].ReceiptSHA256
	if got.Status != broker.StatusOK || receipt.ProviderReceiptSHA256 != want || pr.effects != 1 {
		t.Fatalf("attempt 2: %+v %+v effects %d", got, receipt, pr.effects)
	}
	if rec, _ = j.Call(ctx, "k", "capability-1"); rec.Answer() != Completed || rec.Projection == nil {
		t.Fatalf("after attempt 2: %s, projection %s", rec.Answer(), rec.Projection)
	}

	got, receipt = attempt()
	if got.Status != broker.StatusOK || !receipt.Replayed || receipt.ProviderReceiptSHA256 != want || pr.effects != 1 {
		t.Fatalf("attempt 3: %+v %+v", got, receipt)
	}
	if ps := j.Verify(ctx); len(ps) != 0 {
		t.Fatalf("Verify: %+v", ps)
	}
	if _, err := j.db.Exec(`UPDATE calls SET projection = ?`, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if ps := j.Verify(ctx); len(ps) != 1 || ps[0].Code != ProblemPayload {
		t.Fatalf("Verify of an altered projection: %+v", ps)
	}
}

func firstEffect(p *recordingProvider) string {
	for id := range p.decided {
		return id
	}
	return ""
}

// TestOpenAddsProviderColumns: a journal created before the binding and
// projection columns opens, and gains them.
func TestOpenAddsProviderColumns(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir)
	for _, col := range addedColumns {
		if _, err := j.db.Exec(`ALTER TABLE calls DROP COLUMN ` + col); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	j = open(t, dir)
	if _, err := j.BeginRun(ctx, "k", fp, Owner()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := j.Intent(ctx, "k", "capability-1", fp.RequestSHA256); err != nil {
		t.Fatal(err)
	}
	if err := j.BeginDispatch(ctx, "k", "capability-1", []byte(`{"b":1}`)); err != nil {
		t.Fatal(err)
	}
	if rec, err := j.Call(ctx, "k", "capability-1"); err != nil || string(rec.Binding) != `{"b":1}` {
		t.Fatalf("%+v %v", rec, err)
	}
}
