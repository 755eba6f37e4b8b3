package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

func readManifest(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/weather.json")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// anyHandlers is a HandlerChecker that knows every handler: plan's tests
// check what plan checks (broker/handlers tests the rest).
type anyHandlers struct{}

func (anyHandlers) CheckHandlers(*Manifest) error { return nil }

// checkerFunc adapts a function to HandlerChecker.
type checkerFunc func(*Manifest) error

func (f checkerFunc) CheckHandlers(m *Manifest) error { return f(m) }

// Seal reports the checker's problems with its own, each once, and refuses
// without a checker.
func TestSealAsksTheHandlerChecker(t *testing.T) {
	m, err := ParseManifest(readManifest(t))
	if err != nil {
		t.Fatal(err)
	}
	m.MaxCalls = 0
	unknown := &Error{Code: "unknown_handler", Path: "capabilities[0].handler.id", Message: "unknown builtin"}
	_, err = m.Seal(checkerFunc(func(*Manifest) error { return Problems{unknown, unknown} }))
	var ps Problems
	if !errors.As(err, &ps) || len(ps) != 2 || ps[0].Code != CodeInvalidMaxCalls || ps[0].Path != "max_calls" || *ps[1] != *unknown {
		t.Fatalf("got %v", err)
	}
	if err := m.Validate(nil); CodeOf(err) != CodeInvalidMaxCalls || !strings.Contains(err.Error(), CodeInvalidHandler) {
		t.Fatalf("nil checker: %v", err)
	}
	m.MaxCalls = 4
	if _, err := m.Seal(nil); CodeOf(err) != CodeInvalidHandler {
		t.Fatalf("nil checker: %v", err)
	}
	if err := m.Validate(anyHandlers{}); err != nil {
		t.Fatal(err)
	}
}

func sealBytes(t *testing.T, data []byte) *Plan {
	t.Helper()
	m, err := ParseManifest(data)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	p, err := m.Seal(anyHandlers{})
	if err != nil {
		t.Fatalf("seal: %v", err)
	}
	return p
}

// mutate decodes the manifest into generic JSON, applies f, re-encodes.
func mutate(t *testing.T, data []byte, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func caps(m map[string]any) []any                  { return m["capabilities"].([]any) }
func capAt(m map[string]any, i int) map[string]any { return caps(m)[i].(map[string]any) }

func TestIdentityIndependentOfOrder(t *testing.T) {
	data := readManifest(t)
	want := sealBytes(t, data).Identity()
	reordered := mutate(t, data, func(m map[string]any) {
		c := caps(m)
		c[0], c[1] = c[1], c[0]
		g := m["grants"].([]any)
		g[0], g[1] = g[1], g[0]
	})
	// encoding/json sorts keys; write one with keys in another order by hand.
	reKeyed := strings.Replace(string(data), `"effect": "read", "playback": "live"`, `"playback": "live", "effect": "read"`, 1)
	if reKeyed == string(data) {
		t.Fatal("test manifest changed; key swap did not apply")
	}
	for name, d := range map[string][]byte{"reordered": reordered, "rekeyed": []byte(reKeyed)} {
		if got := sealBytes(t, d).Identity(); got != want {
			t.Errorf("%s: identity %s, want %s", name, got, want)
		}
	}
}

func TestIdentityRecomputesFromEvidence(t *testing.T) {
	p := sealBytes(t, readManifest(t))
	doc := p.EvidenceDocument()
	sum := sha256.Sum256(append([]byte("apysup.plan.v1\x00"), doc...))
	if want := "sha256:" + hex.EncodeToString(sum[:]); p.Identity() != want {
		t.Fatalf("identity %s does not recompute: %s", p.Identity(), want)
	}
	var ev map[string]any
	if err := json.Unmarshal(doc, &ev); err != nil {
		t.Fatal(err)
	}
	if ev["schema_version"] != "apysup.plan.v1" || ev["max_calls"] != float64(16) {
		t.Fatalf("evidence header: %v", ev)
	}
	capsEv := ev["capabilities"].([]any)
	if len(capsEv) != 2 || capsEv[0].(map[string]any)["name"] != "notes.put" {
		t.Fatalf("capabilities not sorted by name: %v", capsEv)
	}
	if _, has := capsEv[0].(map[string]any)["python"]; has {
		t.Fatal("presentation leaked into the evidence document")
	}
}

func TestIdentityChanges(t *testing.T) {
	data := readManifest(t)
	base := sealBytes(t, data).Identity()
	changes := map[string]func(m map[string]any){
		"handler version": func(m map[string]any) { capAt(m, 0)["handler"].(map[string]any)["version"] = "2" },
		"handler id":      func(m map[string]any) { capAt(m, 0)["handler"].(map[string]any)["id"] = "echo2" },
		"handler config":  func(m map[string]any) { capAt(m, 0)["handler"].(map[string]any)["config"] = map[string]any{"x": 1} },
		"input schema":    func(m map[string]any) { capAt(m, 0)["input_schema"] = map[string]any{"type": "object"} },
		"output schema":   func(m map[string]any) { capAt(m, 1)["output_schema"] = map[string]any{"type": "object"} },
		"max_calls":       func(m map[string]any) { m["max_calls"] = 17 },
		"grant policy": func(m map[string]any) {
			m["grants"].([]any)[0].(map[string]any)["policy"] = map[string]any{"arguments": map[string]any{"properties": map[string]any{"city": map[string]any{"enum": []any{"Paris"}}}}}
		},
		"effect":   func(m map[string]any) { capAt(m, 0)["effect"] = "external" },
		"approval": func(m map[string]any) { capAt(m, 1)["approval"] = map[string]any{"lease_seconds": 60} },
	}
	for name, f := range changes {
		if got := sealBytes(t, mutate(t, data, f)).Identity(); got == base {
			t.Errorf("changing %s did not change the identity", name)
		}
	}
	presentation := map[string]func(m map[string]any){
		"module":    func(m map[string]any) { capAt(m, 0)["python"].(map[string]any)["module"] = "meteo" },
		"function":  func(m map[string]any) { capAt(m, 0)["python"].(map[string]any)["function"] = "fetch" },
		"aliases":   func(m map[string]any) { capAt(m, 0)["python"].(map[string]any)["aliases"] = []any{"w", "wx"} },
		"no python": func(m map[string]any) { delete(capAt(m, 1), "python") },
		"globals":   func(m map[string]any) { capAt(m, 0)["python"].(map[string]any)["globals"] = []any{"wx"} },
	}
	for name, f := range presentation {
		if got := sealBytes(t, mutate(t, data, f)).Identity(); got != base {
			t.Errorf("changing presentation (%s) changed the identity", name)
		}
	}
}

func TestSealOnceAndNoLateRegistration(t *testing.T) {
	m, err := ParseManifest(readManifest(t))
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRegistry(4)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := NewGrant(json.RawMessage(`{}`))
	if err := r.Register(m.Capabilities[0].Spec); err != nil {
		t.Fatal(err)
	}
	if err := r.Bind(m.Capabilities[0].Spec.Name, g); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Seal(); err != nil {
		t.Fatal(err)
	}
	if code := CodeOf(r.Register(m.Capabilities[1].Spec)); code != CodeRegistrySealed {
		t.Fatalf("late Register: %q", code)
	}
	if code := CodeOf(r.Bind(m.Capabilities[0].Spec.Name, g)); code != CodeRegistrySealed {
		t.Fatalf("late Bind: %q", code)
	}
	if _, err := r.Seal(); CodeOf(err) != CodeRegistrySealed {
		t.Fatalf("second Seal: %v", err)
	}
}

func TestEveryCapabilityNeedsOneGrant(t *testing.T) {
	data := readManifest(t)
	noGrant := mutate(t, data, func(m map[string]any) { m["grants"] = m["grants"].([]any)[:1] })
	m, err := ParseManifest(noGrant)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Seal(anyHandlers{}); !strings.Contains(err.Error(), CodeCapabilityUngranted) {
		t.Fatalf("ungranted capability sealed: %v", err)
	}
}

func TestManifestReportsEveryProblemWithPath(t *testing.T) {
	data := readManifest(t)
	bad := mutate(t, data, func(m map[string]any) {
		capAt(m, 1)["effect"] = "delete"
		capAt(m, 0)["name"] = "Weather"
		capAt(m, 0)["surprise"] = true
		m["grants"].([]any)[1].(map[string]any)["capability"] = "nope.nothing"
		capAt(m, 1)["approval"] = map[string]any{"lease_seconds": 0}
	})
	m, err := ParseManifest(bad)
	if err == nil {
		_, err = m.Seal(anyHandlers{})
	}
	if err == nil {
		t.Fatal("bad manifest accepted")
	}
	// Parse-time problems are reported together; registration problems
	// together after that. Here the unknown field stops it at parse time.
	if !strings.Contains(err.Error(), "capabilities[0].surprise: unknown field") {
		t.Fatalf("missing unknown-field path: %v", err)
	}
	bad = mutate(t, bad, func(m map[string]any) { delete(capAt(m, 0), "surprise") })
	m, err = ParseManifest(bad)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Seal(anyHandlers{})
	var problems Problems
	if !asProblems(err, &problems) {
		t.Fatalf("not Problems: %v", err)
	}
	want := []string{"capabilities[0].name", "capabilities[1].effect", "capabilities[1].approval.lease_seconds", "grants[1].capability"}
	checkProblems(t, err, problems, want)

	// A bad max_calls is one problem among the others, at its own path.
	bad = mutate(t, bad, func(m map[string]any) { m["max_calls"] = 0 })
	if m, err = ParseManifest(bad); err != nil {
		t.Fatal(err)
	}
	_, err = m.Seal(anyHandlers{})
	if !asProblems(err, &problems) {
		t.Fatalf("not Problems: %v", err)
	}
	checkProblems(t, err, problems, append(want, "max_calls"))
}

func checkProblems(t *testing.T, err error, problems Problems, want []string) {
	t.Helper()
	for _, w := range want {
		found := false
		for _, p := range problems {
			if p.Path == w {
				found = true
			}
		}
		if !found {
			t.Errorf("no problem at %s in:\n%v", w, err)
		}
	}
}

func asProblems(err error, out *Problems) bool {
	p, ok := err.(Problems)
	*out = p
	return ok
}

func TestManifestRefusals(t *testing.T) {
	data := readManifest(t)
	cases := map[string]struct {
		mutate func(m map[string]any)
		code   string
	}{
		"python collision across capabilities": {func(m map[string]any) {
			capAt(m, 1)["python"] = map[string]any{"module": "weather", "function": "get_weather"}
		}, CodePythonCollision},
		"alias equals function": {func(m map[string]any) {
			capAt(m, 0)["python"].(map[string]any)["aliases"] = []any{"get"}
		}, CodePythonCollision},
		"stdlib shadow":    {func(m map[string]any) { capAt(m, 0)["python"].(map[string]any)["module"] = "json" }, CodePythonCollision},
		"runtime shadow":   {func(m map[string]any) { capAt(m, 0)["python"].(map[string]any)["module"] = "agent_runtime" }, CodePythonCollision},
		"keyword function": {func(m map[string]any) { capAt(m, 0)["python"].(map[string]any)["function"] = "class" }, CodeInvalidPython},
		"duplicate name":   {func(m map[string]any) { capAt(m, 1)["name"] = "weather.get" }, CodeDuplicateCapability},
		"bad playback":     {func(m map[string]any) { capAt(m, 0)["playback"] = "recorded" }, CodeInvalidPlayback},
		"bad schema":       {func(m map[string]any) { capAt(m, 0)["input_schema"] = map[string]any{"type": 12} }, CodeInvalidSchema},
		"external ref": {func(m map[string]any) {
			capAt(m, 0)["input_schema"] = map[string]any{"$ref": "https://example.com/s.json"}
		}, CodeInvalidSchema},
		"file ref":          {func(m map[string]any) { capAt(m, 0)["input_schema"] = map[string]any{"$ref": "file:///etc/passwd"} }, CodeInvalidSchema},
		"long name":         {func(m map[string]any) { capAt(m, 0)["name"] = strings.Repeat("a", 65) }, CodeInvalidName},
		"max_calls zero":    {func(m map[string]any) { m["max_calls"] = 0 }, CodeInvalidMaxCalls},
		"max_calls too big": {func(m map[string]any) { m["max_calls"] = 257 }, CodeInvalidMaxCalls},
		"lease too long":    {func(m map[string]any) { capAt(m, 1)["approval"] = map[string]any{"lease_seconds": 86401} }, CodeInvalidApproval},
		"duplicate grant":   {func(m map[string]any) { m["grants"] = append(m["grants"].([]any), m["grants"].([]any)[0]) }, CodeDuplicateGrant},
		"bad handler kind":  {func(m map[string]any) { capAt(m, 0)["handler"].(map[string]any)["kind"] = "Bad Kind" }, CodeInvalidHandler},
		"grant too large": {func(m map[string]any) {
			m["grants"].([]any)[0].(map[string]any)["policy"] = map[string]any{"x": strings.Repeat("a", MaxGrantBytes)}
		}, CodeGrantTooLarge},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m, err := ParseManifest(mutate(t, data, tc.mutate))
			if err == nil {
				_, err = m.Seal(anyHandlers{})
			}
			if err == nil || !strings.Contains(err.Error(), "("+tc.code+")") {
				t.Fatalf("want %s, got %v", tc.code, err)
			}
			if strings.Contains(err.Error(), "GRANT-SECRET") {
				t.Fatal("grant policy leaked into an error")
			}
		})
	}
}

func TestGrantNeverLeaks(t *testing.T) {
	p := sealBytes(t, readManifest(t))
	const secret = "GRANT-SECRET-7f3a"
	tools, _ := json.Marshal(p.ToolSchemas())
	outputs := map[string][]byte{"evidence": p.EvidenceDocument(), "tools": tools}
	for _, s := range []Surface{SurfaceDirect, SurfaceProgrammatic, SurfaceBoth} {
		parent := "toolu_1"
		if s == SurfaceDirect {
			parent = ""
		}
		pr, err := p.Present(s, parent)
		if err != nil {
			t.Fatal(err)
		}
		outputs["prelude "+string(s)] = pr.Prelude
	}
	for name, out := range outputs {
		if strings.Contains(string(out), secret) || strings.Contains(string(out), "Oslo") {
			t.Errorf("grant policy leaked into %s", name)
		}
	}
	g, err := NewGrant(json.RawMessage(`{"arguments":{"$comment":"` + secret + `"}}`))
	if err != nil || strings.Contains(g.String(), secret) || !strings.HasPrefix(g.Identity(), "sha256:") {
		t.Fatalf("grant string: %s %v", g, err)
	}
	if _, err := NewGrant(json.RawMessage(`{"token":"` + secret + `"}`)); err == nil || strings.Contains(err.Error(), secret) {
		t.Fatalf("unknown policy field: %v", err)
	}
	if _, err := NewGrant(json.RawMessage(`["` + secret + `"]`)); err == nil || strings.Contains(err.Error(), secret) {
		t.Fatalf("non-object grant: %v", err)
	}
}

func TestSchemasValidate(t *testing.T) {
	p := sealBytes(t, readManifest(t))
	c, ok := p.Lookup("weather.get")
	if !ok {
		t.Fatal("lookup")
	}
	if err := c.ValidateInput(map[string]any{"city": "Paris"}); err != nil {
		t.Fatal(err)
	}
	if err := c.ValidateInput(map[string]any{"city": "Paris", "x": 1}); err == nil {
		t.Fatal("additionalProperties not enforced")
	}
	if _, ok := p.Lookup("weather.nope"); ok {
		t.Fatal("unknown capability found")
	}
}
