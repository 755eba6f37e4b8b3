package serve

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/plan"
)

// revoker is a handler that revokes grants, in memory.
type revoker struct {
	broker.Handler
	revoked []string
	fail    bool
}

func (r *revoker) Revoke(_ context.Context, policySHA256 string) (string, error) {
	if r.fail {
		return "", errors.New("read-only store")
	}
	r.revoked = append(r.revoked, policySHA256)
	return canonjson.PlainDigest([]byte("revoked " + policySHA256)), nil
}

// TestRevokeGrant: POST /v1/grants/revoke reaches the handler that serves
// the cached Plan's runs and answers with the revocation, or a typed
// refusal, each as docs/api.md and the OpenAPI document say.
func TestRevokeGrant(t *testing.T) {
	s := newTestServer(t, Config{})
	a := newAPICall(t, s)
	var echo PlanResponse
	json.Unmarshal(a.do("POST", "/v1/plans", `{"manifest": `+echoManifest+`}`, 200).Body.Bytes(), &echo)

	// A Plan whose handler is a revoker, cached as POST /v1/plans would.
	r, _ := plan.NewRegistry(4)
	id, _ := plan.NewHandlerIdentity("test", "revoker", "1", nil)
	if err := r.Register(plan.Spec{Name: "notes.put", Version: "1", Effect: plan.EffectWrite, Playback: plan.PlaybackLive, Handler: id}); err != nil {
		t.Fatal(err)
	}
	g, _ := plan.NewGrant(json.RawMessage(`{"max_calls": 3}`))
	_ = r.Bind("notes.put", g)
	p, err := r.Seal()
	if err != nil {
		t.Fatal(err)
	}
	rv := &revoker{Handler: broker.Echo{}}
	hs := broker.NewHandlers()
	_ = hs.Add(id, rv)
	sp := &sealedPlan{plan: p, handlers: hs, closer: nopCloser{}, refs: 1}
	s.plans.mu.Lock()
	s.plans.byID[p.Identity()] = sp
	s.plans.order = append(s.plans.order, p.Identity())
	s.plans.mu.Unlock()

	var rev broker.Revocation
	json.Unmarshal(a.do("POST", "/v1/grants/revoke", `{"plan_sha256": "`+p.Identity()+`", "capability": "notes.put"}`, 200).Body.Bytes(), &rev)
	if rev.PolicySHA256 != g.Identity() || len(rv.revoked) != 1 || rv.revoked[0] != g.Identity() ||
		rev.PolicyOrderReceiptSHA256 != canonjson.PlainDigest([]byte("revoked "+g.Identity())) {
		t.Fatalf("revocation %+v, revoked %v", rev, rv.revoked)
	}
	rv.fail = true
	for _, c := range []struct {
		name, body string
		status     int
		code       string
	}{
		{"provider fails", `{"plan_sha256": "` + p.Identity() + `", "capability": "notes.put"}`, 503, broker.CodeRevocationFailed},
		{"unknown capability", `{"plan_sha256": "` + p.Identity() + `", "capability": "notes.get"}`, 404, broker.CodeUnknownCapability},
		{"not a provider", `{"plan_sha256": "` + echo.PlanSHA256 + `", "capability": "weather.get"}`, 409, broker.CodeGrantNotRevocable},
		{"unknown plan", `{"plan_sha256": "sha256:00", "capability": "notes.put"}`, 404, CodePlanNotFound},
		{"no capability", `{"plan_sha256": "` + p.Identity() + `"}`, 400, CodeInvalidRequest},
		{"unknown field", `{"plan_sha256": "` + p.Identity() + `", "capability": "notes.put", "policy": {}}`, 400, CodeInvalidRequest},
	} {
		t.Run(c.name, func(t *testing.T) {
			a.t = t
			if got := errorCode(t, a.do("POST", "/v1/grants/revoke", c.body, c.status)); got != c.code {
				t.Errorf("error_code %q, want %q", got, c.code)
			}
		})
	}
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }
