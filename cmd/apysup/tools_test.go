package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPlanToolsFormats: each format prints its API's tools with names
// every API accepts and the mapping back; plain output lists tool,
// capability and description.
func TestPlanToolsFormats(t *testing.T) {
	const m = "../../examples/plan.json"
	out, errOut, code := run(t, "plan", "tools", m)
	if code != 0 || !strings.HasPrefix(out, "weather-get ") || !strings.Contains(out, " weather.get ") {
		t.Fatalf("exit %d: %q %s", code, out, errOut)
	}
	for format, nameAt := range map[string][]string{
		"anthropic": {"name"}, "openai": {"function", "name"}, "mcp": {"name"},
	} {
		out, errOut, code := run(t, "plan", "tools", m, "--format", format)
		var doc struct {
			Format  string            `json:"format"`
			Plan    string            `json:"plan_sha256"`
			Tools   []map[string]any  `json:"tools"`
			Mapping map[string]string `json:"mapping"`
		}
		if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil {
			t.Fatalf("%s: exit %d %v: %s %s", format, code, err, out, errOut)
		}
		if doc.Format != format || len(doc.Tools) != 1 || !strings.HasPrefix(doc.Plan, "sha256:") {
			t.Fatalf("%s: %s", format, out)
		}
		var name any = doc.Tools[0]
		for _, key := range nameAt {
			name = name.(map[string]any)[key]
		}
		if name != "weather-get" || doc.Mapping["weather-get"] != "weather.get" {
			t.Fatalf("%s: tool %v, mapping %v", format, name, doc.Mapping)
		}
	}
	// A format nobody asked for, the old --json, and a capability that
	// cannot be a tool: usage errors, exit 2.
	notObject := strings.Replace(readFile(t, m), `"input_schema": {"type": "object", `, `"input_schema": {`, 1)
	for _, args := range [][]string{
		{"plan", "tools", m, "--format", "gemini"},
		{"plan", "tools", m, "--json"},
		{"plan", "tools", writeManifest(t, notObject), "--format", "mcp"},
		{"plan", "tools", writeManifest(t, notObject)},
	} {
		if out, errOut, code := run(t, args...); code != 2 || out != "" {
			t.Errorf("%v: exit %d: %q %q", args, code, out, errOut)
		}
	}
	if _, errOut, _ := run(t, "plan", "tools", writeManifest(t, notObject)); !strings.Contains(errOut, "(tool_schema_not_object)") {
		t.Errorf("no typed refusal: %s", errOut)
	}
}

// TestRunCallsGlobalWithoutImport: examples/plan.json presents weather.get
// as the global get_weather too; a script calls it with no import, on both
// backends.
func TestRunCallsGlobalWithoutImport(t *testing.T) {
	needNative(t)
	needWASI(t)
	body := script(t, "print(get_weather(city='Oslo'))\nprint(get_weather.__module__, 'get_weather' in globals())\n")
	for _, backend := range []string{"native", "wazero"} {
		res, code, errOut := runJSON(t, "--backend", backend, "--plan", "../../examples/plan.json", body)
		if code != 0 || res.Status != "ok" {
			t.Fatalf("%s: exit %d: %+v %s", backend, code, res, errOut)
		}
		if res.Stdout != "{'echo': {'city': 'Oslo'}}\n__main__ True\n" || len(res.Receipts) != 1 || res.Receipts[0].Capability != "weather.get" {
			t.Fatalf("%s: stdout %q receipts %+v", backend, res.Stdout, res.Receipts)
		}
	}
}
