package handlers

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/acceptance/conformance"
	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/plan"
)

// The example provider tool (examples/provider/notes_provider.py) through
// the exec handler, through the conformance suite: every operation is a
// process of its own, as the exec handler always runs it.
func TestExecProviderConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.Harness { return newNotesHarness(t) })
}

// notesHarness is one store of the example tool with a credential per
// principal: Alice and Bob hold the same grant in two tenants, Mallory
// shares Alice's tenant and subject with another key and another grant.
type notesHarness struct {
	s        *notesStore
	keys     map[conformance.Principal]string
	policies map[conformance.Principal]string

	mu     sync.Mutex
	now    int64
	epochs int
}

func newNotesHarness(t *testing.T) *notesHarness {
	s := newNotesStore(t) // tenant-a's credential for testPolicy: Alice's
	other := canonjson.PlainDigest([]byte("mallory's grant"))
	return &notesHarness{s: s, now: 1_000_000, epochs: 1,
		keys: map[conformance.Principal]string{
			conformance.Alice:   s.key,
			conformance.Bob:     s.issue(t, "tenant-b", testPolicy),
			conformance.Mallory: s.issue(t, "tenant-a", other),
		},
		policies: map[conformance.Principal]string{conformance.Alice: testPolicy, conformance.Bob: testPolicy, conformance.Mallory: other},
	}
}

// notesConformanceProvider is the exec provider with the tool's operator
// commands as its retention side.
type notesConformanceProvider struct {
	*execProvider
	h   *notesHarness
	env map[string]string // the Control's test points, for the operator commands too
}

func (h *notesHarness) Provider(t *testing.T, as conformance.Principal, c conformance.Control) broker.Provider {
	t.Helper()
	h.mu.Lock()
	env := map[string]string{"NOTES_PROVIDER_NOW": strconv.FormatInt(h.now, 10)}
	h.mu.Unlock()
	if c.KillAt != "" {
		env["NOTES_PROVIDER_KILL_AT"] = c.KillAt
	}
	if c.Barrier != nil {
		env["NOTES_PROVIDER_BARRIER"] = c.Barrier.Dir + ":" + c.Barrier.Point
	}
	argv, _ := json.Marshal([]string{hostPython, "-I", notesTool(t), "serve", "--db", h.s.db, "--epoch-file", h.s.epochs})
	envJSON, _ := json.Marshal(env)
	p := providerOf(t, `{"argv":`+string(argv)+`,"timeout":"120s","env":`+string(envJSON)+`,`+
		`"provider":{"id":"notes","guarantees":`+allGuarantees+`,"retention_seconds":3600,"readback":true,"credential_file":"`+h.keys[as]+`"}}`)
	return &notesConformanceProvider{execProvider: p, h: h, env: env}
}

func (p *notesConformanceProvider) Compact(ctx context.Context) (int, error) {
	p.h.mu.Lock()
	now := p.h.now
	p.h.mu.Unlock()
	out, err := p.h.operator(ctx, p.env, "compact", "--now", strconv.FormatInt(now, 10))
	if err != nil {
		return 0, err
	}
	var r struct {
		Compacted int `json:"compacted"`
	}
	return r.Compacted, json.Unmarshal(out, &r)
}

func (p *notesConformanceProvider) RetireEpoch(ctx context.Context) (string, error) {
	p.h.mu.Lock()
	p.h.epochs++
	epoch := fmt.Sprintf("e%d", p.h.epochs)
	p.h.mu.Unlock()
	_, err := p.h.operator(ctx, p.env, "advance", "--epoch", epoch)
	return epoch, err
}

func (h *notesHarness) operator(ctx context.Context, env map[string]string, cmd string, args ...string) ([]byte, error) {
	argv := append([]string{"-I", notesToolPath(), cmd, "--db", h.s.db, "--epoch-file", h.s.epochs}, args...)
	c := exec.CommandContext(ctx, hostPython, argv...)
	c.Env = []string{"PATH=/usr/bin:/bin"}
	for k, v := range env {
		c.Env = append(c.Env, k+"="+v)
	}
	out, err := c.Output()
	if err != nil {
		return nil, fmt.Errorf("notes_provider %s: %w", cmd, err)
	}
	return out, nil
}

func notesToolPath() string {
	p, _ := filepath.Abs("../../examples/provider/notes_provider.py")
	return p
}

func (h *notesHarness) Base(t *testing.T, as conformance.Principal) broker.EffectBinding {
	return broker.EffectBinding{Capability: "notes.publish",
		Handler:      plan.HandlerIdentity{Kind: "exec", ID: "notes", Version: "1", ConfigSHA256: canonjson.PlainDigest([]byte("config"))},
		PolicySHA256: h.policies[as], Acceptance: plan.AcceptanceStrict}
}

// Args publishes value (a JSON string) as the body of the note key.
func (h *notesHarness) Args(key, value string) json.RawMessage {
	var body string
	if err := json.Unmarshal([]byte(value), &body); err != nil {
		body = value
	}
	raw, _ := json.Marshal(map[string]string{"title": key, "body": body})
	return raw
}

// Denied publishes under restricted/, which the store's policy denies.
func (h *notesHarness) Denied(value string) json.RawMessage { return h.Args("restricted/note", value) }

func (h *notesHarness) Observe(t *testing.T, key string) (string, bool) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+h.s.db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var body string
	switch err := db.QueryRow(`SELECT body FROM notes WHERE title = ?`, key).Scan(&body); err {
	case nil:
		raw, _ := json.Marshal(body)
		return string(raw), true
	case sql.ErrNoRows:
		return "", false
	default:
		t.Fatal(err)
	}
	return "", false
}

// Snapshot copies the database file (a rollback journal: the file alone is
// the committed state when no tool runs).
func (h *notesHarness) Snapshot(t *testing.T) func() {
	t.Helper()
	saved, err := os.ReadFile(h.s.db)
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		_ = os.Remove(h.s.db + "-journal")
		if err := os.WriteFile(h.s.db, saved, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func (h *notesHarness) Advance(d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.now += int64(d / time.Second)
}

func (h *notesHarness) Private() []string {
	private := []string{h.s.dir}
	for _, k := range h.keys {
		private = append(private, k)
		if raw, err := os.ReadFile(k); err == nil {
			private = append(private, string(raw[:len(raw)-1]))
		}
	}
	return private
}
