package handlers

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/acceptance/conformance"
	"github.com/apysup/apysup/plan"
)

// The strict kv provider through the conformance suite, twice: every
// operation in a provider process of its own (this test binary again,
// kvProviderChildEnv set: it opens the store, performs one Accept, Query,
// Revoke, Compact or RetireEpoch and exits), and in this process (a
// Control still runs in a process: a kill needs one).

const kvProviderChildEnv = "APYSUP_KV_PROVIDER_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(kvProviderChildEnv) != "" {
		os.Exit(kvProviderChild())
	}
	os.Exit(m.Run())
}

func TestKVStrictConformanceProcesses(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.Harness { return newKVHarness(t, true) })
}

func TestKVStrictConformanceInProcess(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.Harness { return newKVHarness(t, false) })
}

// kvOp is one provider operation, as a provider process reads it.
type kvOp struct {
	Op           string               `json:"op"` // profile, accept, query, revoke, compact, retire
	Manifest     string               `json:"manifest"`
	NowUnixNano  int64                `json:"now_unix_nano"`
	Binding      broker.EffectBinding `json:"binding"`
	Args         json.RawMessage      `json:"args,omitempty"`
	Policy       string               `json:"policy,omitempty"`
	KillAt       string               `json:"kill_at,omitempty"`
	BarrierDir   string               `json:"barrier_dir,omitempty"`
	BarrierPoint string               `json:"barrier_point,omitempty"`
}

// kvOpResult is its answer.
type kvOpResult struct {
	Profile broker.ProviderProfile `json:"profile"`
	Accept  broker.AcceptResult    `json:"accept"`
	Query   broker.QueryResult     `json:"query"`
	Text    string                 `json:"text,omitempty"`
	N       int                    `json:"n,omitempty"`
	Err     string                 `json:"err,omitempty"`
}

var childSeq atomic.Int64

// runKVOp opens the provider of a manifest, performs one operation and
// closes it.
func runKVOp(op kvOp) kvOpResult {
	var barrier *conformance.Barrier
	if op.BarrierDir != "" {
		barrier = &conformance.Barrier{Dir: op.BarrierDir, Point: op.BarrierPoint}
	}
	name := fmt.Sprintf("%d-%d", os.Getpid(), childSeq.Add(1))
	opts := Options{
		Now: func() time.Time { return time.Unix(0, op.NowUnixNano) },
		ProviderBoundary: func(point string) {
			if point == op.KillAt {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {}
			}
			if barrier != nil && barrier.At(point) {
				barrier.Wait(name)
			}
		},
	}
	m, err := loadKVFixture(op.Manifest)
	if err != nil {
		return kvOpResult{Err: err.Error()}
	}
	b := newBuilder(opts, false)
	defer b.Close()
	b.build(m)
	if len(b.problems) > 0 || len(b.providers) != 1 {
		return kvOpResult{Err: fmt.Sprintf("build: %v", b.problems)}
	}
	p := b.providers[0].p
	ctx := context.Background()
	var r kvOpResult
	switch op.Op {
	case "profile":
		r.Profile = p.Profile()
	case "accept":
		r.Accept, err = p.Accept(ctx, op.Binding, op.Args)
	case "query":
		r.Query, err = p.Query(ctx, op.Binding)
	case "revoke":
		r.Text, err = p.Revoke(ctx, op.Policy)
	case "compact":
		r.N, err = p.Compact(ctx)
	case "retire":
		r.Text, err = p.RetireEpoch(ctx)
	default:
		err = errors.New("unknown op")
	}
	if err != nil {
		r.Err = err.Error()
	}
	return r
}

func kvProviderChild() int {
	var op kvOp
	if err := json.NewDecoder(os.Stdin).Decode(&op); err != nil {
		return 2
	}
	if err := json.NewEncoder(os.Stdout).Encode(runKVOp(op)); err != nil {
		return 2
	}
	return 0
}

// kvHarness is one fresh store, its epoch registry and three principals.
type kvHarness struct {
	dir, store, registry string
	processes            bool
	now                  atomic.Int64
	manifests            map[conformance.Principal]string
	secrets              []string

	mu      sync.Mutex
	profile *broker.ProviderProfile // every principal's provider has one profile; an epoch retirement clears it
}

func newKVHarness(t *testing.T, processes bool) *kvHarness {
	dir := t.TempDir()
	h := &kvHarness{dir: dir, store: filepath.Join(dir, "store.db"), registry: filepath.Join(dir, "epochs.db"),
		processes: processes, manifests: map[conformance.Principal]string{}}
	h.now.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	principals := []struct {
		as              conformance.Principal
		tenant, subject string
		policy          string
	}{
		{conformance.Alice, "tenant-a", "agent", `{"kv":{"namespace":"notes","key_prefix":"n/"}}`},
		{conformance.Bob, "tenant-b", "agent", `{"kv":{"namespace":"notes","key_prefix":"n/"}}`},
		{conformance.Mallory, "tenant-a", "agent", `{"max_calls":7,"kv":{"namespace":"notes","key_prefix":"n/"}}`},
	}
	for i, p := range principals {
		secret := fmt.Sprintf("conformance-secret-%d-%s-0123456789abcdef0123456789", i, p.as)
		cred := filepath.Join(dir, string(p.as)+".credential")
		if err := os.WriteFile(cred, []byte(secret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		h.secrets = append(h.secrets, secret)
		config, _ := json.Marshal(map[string]any{"path": h.store, "op": "put", "namespace": "notes", "acceptance": "strict",
			"credential_file": cred, "epoch_file": h.registry, "tenant": p.tenant, "subject": p.subject, "retention": "1h"})
		doc, _ := json.Marshal(kvFixture{Config: config, Policy: json.RawMessage(p.policy)})
		file := filepath.Join(dir, string(p.as)+".manifest.json")
		if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		h.manifests[p.as] = file
	}
	return h
}

func (h *kvHarness) manifest(t *testing.T, as conformance.Principal) *plan.Manifest {
	m, err := loadKVFixture(h.manifests[as])
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// kvFixture is a principal's handler config and grant: the manifest of
// one strict capability, notes.put.
type kvFixture struct {
	Config json.RawMessage `json:"config"`
	Policy json.RawMessage `json:"policy"`
}

func loadKVFixture(file string) (*plan.Manifest, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var f kvFixture
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, err
	}
	id, err := plan.NewHandlerIdentity(KindKV, "notes-put", "1", f.Config)
	if err != nil {
		return nil, err
	}
	spec := plan.Spec{Name: "notes.put", Version: "1", Effect: plan.EffectWrite, Playback: plan.PlaybackLive, Handler: id,
		InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{}`), Acceptance: plan.AcceptanceStrict}
	return &plan.Manifest{MaxCalls: 64, Capabilities: []plan.ManifestCapability{{Spec: spec, HandlerConfig: f.Config}},
		Grants: []plan.ManifestGrant{{Capability: "notes.put", Policy: f.Policy}}}, nil
}

func (h *kvHarness) Base(t *testing.T, as conformance.Principal) broker.EffectBinding {
	m := h.manifest(t, as)
	g, _, err := m.Grant("notes.put")
	if err != nil {
		t.Fatal(err)
	}
	return broker.EffectBinding{Capability: "notes.put", Handler: m.Capabilities[0].Spec.Handler, PolicySHA256: g.Identity(),
		Acceptance: plan.AcceptanceStrict}
}

func (h *kvHarness) Args(key, value string) json.RawMessage {
	raw, _ := json.Marshal(map[string]json.RawMessage{"key": json.RawMessage(fmt.Sprintf("%q", "n/"+key)), "value": json.RawMessage(value)})
	return raw
}

func (h *kvHarness) Denied(value string) json.RawMessage {
	return json.RawMessage(`{"key":"outside/denied","value":` + value + `}`)
}

func (h *kvHarness) Observe(t *testing.T, key string) (string, bool) {
	db, err := sql.Open("sqlite", h.store+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v string
	err = db.QueryRow(`SELECT value FROM apysup_kv WHERE namespace = 'notes' AND key = ?`, "n/"+key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return v, true
}

// Snapshot copies the store's files (no provider holds them open between
// operations).
func (h *kvHarness) Snapshot(t *testing.T) func() {
	saved := map[string][]byte{}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if b, err := os.ReadFile(h.store + suffix); err == nil {
			saved[suffix] = b
		}
	}
	return func() {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(h.store + suffix)
			if b, ok := saved[suffix]; ok {
				if err := os.WriteFile(h.store+suffix, b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

func (h *kvHarness) Advance(d time.Duration) { h.now.Add(int64(d)) }

func (h *kvHarness) Private() []string { return append([]string{h.dir}, h.secrets...) }

func (h *kvHarness) Provider(t *testing.T, as conformance.Principal, c conformance.Control) broker.Provider {
	return &kvProxy{t: t, h: h, manifest: h.manifests[as], control: c, process: h.processes || c != (conformance.Control{})}
}

// kvProxy performs each operation in a provider of its own, in a process
// when asked.
type kvProxy struct {
	t        *testing.T
	h        *kvHarness
	manifest string
	control  conformance.Control
	process  bool
}

func (x *kvProxy) run(op kvOp) (kvOpResult, error) {
	op.Manifest, op.NowUnixNano, op.KillAt = x.manifest, x.h.now.Load(), x.control.KillAt
	if x.control.Barrier != nil {
		op.BarrierDir, op.BarrierPoint = x.control.Barrier.Dir, x.control.Barrier.Point
	}
	if !x.process {
		r := runKVOp(op)
		if r.Err != "" {
			return r, errors.New(r.Err)
		}
		return r, nil
	}
	in, _ := json.Marshal(op)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), kvProviderChildEnv+"=1")
	cmd.Stdin = bytes.NewReader(in)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = io.Discard
	if err := cmd.Run(); err != nil {
		return kvOpResult{}, fmt.Errorf("provider process: %w", err) // killed: the response is lost
	}
	var r kvOpResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return kvOpResult{}, err
	}
	for _, res := range []*json.RawMessage{&r.Accept.Result, &r.Query.Result} {
		if string(*res) == "null" { // JSON's spelling of no result
			*res = nil
		}
	}
	if r.Err != "" {
		return r, errors.New(r.Err)
	}
	return r, nil
}

func (x *kvProxy) Profile() broker.ProviderProfile {
	x.h.mu.Lock()
	defer x.h.mu.Unlock()
	if x.h.profile == nil {
		r, err := (&kvProxy{t: x.t, h: x.h, manifest: x.manifest, process: x.process}).run(kvOp{Op: "profile"})
		if err != nil {
			x.t.Errorf("profile: %v", err)
			return broker.ProviderProfile{}
		}
		x.h.profile = &r.Profile
	}
	return *x.h.profile
}

func (x *kvProxy) Accept(_ context.Context, b broker.EffectBinding, args json.RawMessage) (broker.AcceptResult, error) {
	r, err := x.run(kvOp{Op: "accept", Binding: b, Args: args})
	return r.Accept, err
}

func (x *kvProxy) Query(_ context.Context, b broker.EffectBinding) (broker.QueryResult, error) {
	r, err := x.run(kvOp{Op: "query", Binding: b})
	return r.Query, err
}

func (x *kvProxy) Revoke(_ context.Context, policy string) (string, error) {
	r, err := x.run(kvOp{Op: "revoke", Policy: policy})
	return r.Text, err
}

func (x *kvProxy) Compact(context.Context) (int, error) {
	r, err := x.run(kvOp{Op: "compact"})
	return r.N, err
}

func (x *kvProxy) RetireEpoch(context.Context) (string, error) {
	x.h.mu.Lock()
	x.h.profile = nil // a killed retirement may have retired the epoch too
	x.h.mu.Unlock()
	r, err := x.run(kvOp{Op: "retire"})
	x.h.mu.Lock()
	x.h.profile = nil
	x.h.mu.Unlock()
	return r.Text, err
}
