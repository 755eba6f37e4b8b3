package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/broker/handlers"
	"github.com/apysup/apysup/plan"
)

// manifestBlocks are the complete manifests shown in a markdown file.
func manifestBlocks(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	for _, m := range regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(readFile(t, path), -1) {
		if strings.Contains(m[1], `"schema_version": "apysup.manifest.v1"`) {
			out = append(out, m[1])
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s shows no manifest", path)
	}
	return out
}

// The grants the documentation shows restrict what they appear to: every
// manifest in README.md and docs/manifest.md seals, and the README's
// weather.get answers Paris, four times, and nothing else.
func TestDocumentedGrantsRestrict(t *testing.T) {
	var readme *plan.Manifest
	for _, path := range []string{"../../README.md", "../../docs/manifest.md"} {
		for _, block := range manifestBlocks(t, path) {
			m, err := plan.ParseManifest([]byte(block))
			if err == nil {
				_, err = m.Seal(handlers.Checker{})
			}
			if err != nil {
				t.Fatalf("%s: a manifest that does not seal:\n%s\n%v", path, block, err)
			}
			if readme == nil {
				readme = m
			}
		}
	}
	p, err := readme.Seal(handlers.Checker{})
	if err != nil {
		t.Fatal(err)
	}
	hs, closer, err := handlers.Build(readme, handlers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	b, err := broker.New(broker.Config{Plan: p, RunID: "readme", Surface: plan.SurfaceDirect, Handlers: hs})
	if err != nil {
		t.Fatal(err)
	}
	for i, city := range []string{"Paris", "Oslo", "", "Paris", "Paris", "Paris", "Paris", "Paris"} {
		args := `{"city":"` + city + `"}`
		if city == "" {
			args = `{}`
		}
		var r struct {
			Status    string `json:"status"`
			ErrorCode string `json:"error_code"`
			Message   string `json:"message"`
		}
		frame := fmt.Sprintf(`{"call_id":"capability-%d","capability":"weather.get","arguments":%s}`, i+1, args)
		if err := json.Unmarshal(b.Call(context.Background(), []byte(frame)).AppendJSON(nil), &r); err != nil {
			t.Fatal(err)
		}
		want := "ok"
		if city != "Paris" || i >= 6 { // four Paris calls: 0, 3, 4, 5
			want = "grant_denied"
		}
		if got := map[bool]string{true: "ok", false: r.ErrorCode}[r.Status == "ok"]; got != want {
			t.Fatalf("call %d (%s): %+v, want %s", i+1, args, r, want)
		}
	}
}

// A policy field apysup does not know is refused when the Plan is sealed,
// with its path, by every command that seals.
func TestSealRefusesUnknownGrantField(t *testing.T) {
	body := strings.Replace(readFile(t, "../../examples/plan.json"), `"policy": {"arguments"`, `"policy": {"cities": ["Paris"], "arguments"`, 1)
	m := writeManifest(t, body)
	for _, args := range [][]string{{"plan", "seal", m}, {"run", "--plan", m, "../../examples/hello.py"}} {
		_, errOut, code := run(t, args...)
		if code != 2 || !strings.Contains(errOut, "grants[0].policy.cities: unknown field (invalid_grant)") || strings.Contains(errOut, "Paris") {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
	}
}

// End to end from a confined guest: the example Plan's grant answers Paris
// and Oslo and refuses Berlin before the handler, with a message that names
// the argument and a denied receipt.
func TestRunGrantDenied(t *testing.T) {
	needNative(t)
	res, code, errOut := runJSON(t, "--plan", "../../examples/plan.json", script(t, `import agent_runtime, weather
for city in ("Paris", "Berlin", "Oslo"):
    try:
        print(city, weather.get(city=city))
    except agent_runtime.CapabilityError as e:
        print(city, e.error_code, e.message)
`))
	if code != 0 {
		t.Fatalf("exit %d: %s %+v", code, errOut, res)
	}
	want := "Paris {'echo': {'city': 'Paris'}}\n" +
		"Berlin grant_denied the capability's grant does not allow the argument at /city\n" +
		"Oslo {'echo': {'city': 'Oslo'}}\n"
	if res.Stdout != want {
		t.Fatalf("guest saw:\n%s\nwant:\n%s", res.Stdout, want)
	}
	// The refusal is receipt-free: only the two calls the grant allowed.
	if len(res.Receipts) != 2 || res.Receipts[0].Outcome != "ok" || res.Receipts[1].Outcome != "ok" {
		t.Fatalf("receipts %+v", res.Receipts)
	}
}
