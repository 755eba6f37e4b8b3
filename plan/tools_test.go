package plan

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/apysup/apysup/internal/canonjson"
)

// toolsManifest is the weather manifest with a capability whose name has
// three words and whose input schema is absent ({}).
func toolsManifest(t *testing.T) []byte {
	return mutate(t, readManifest(t), func(m map[string]any) {
		m["capabilities"] = append(caps(m), map[string]any{
			"name": "files.read_text.v2", "version": "1", "effect": "external", "playback": "live",
			"handler": map[string]any{"kind": "builtin", "id": "echo", "version": "1"},
		})
		m["grants"] = append(m["grants"].([]any), map[string]any{"capability": "files.read_text.v2", "policy": map[string]any{}})
	})
}

// The published rules (testdata/tools/*.schema.json, written from each
// API's reference; the sources are in their $comment) hold for every tool
// of every format, and the names are the narrowest rule's.
func TestToolSetFollowsPublishedRules(t *testing.T) {
	p := sealBytes(t, toolsManifest(t))
	names := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	for _, format := range []ToolFormat{ToolFormatAnthropic, ToolFormatOpenAI, ToolFormatMCP} {
		t.Run(string(format), func(t *testing.T) {
			raw, err := os.ReadFile("testdata/tools/" + string(format) + ".schema.json")
			if err != nil {
				t.Fatal(err)
			}
			_, rule, err := compileSchemaDoc(raw, false)
			if err != nil {
				t.Fatalf("rule: %v", err)
			}
			set, err := p.ToolSet(format)
			if err != nil {
				t.Fatal(err)
			}
			if len(set.Tools) != 3 || len(set.Mapping) != 3 {
				t.Fatalf("%d tools, %d mappings", len(set.Tools), len(set.Mapping))
			}
			seen := map[string]bool{}
			for i, tool := range set.Tools {
				v, err := canonjson.ParseStrict(tool, 1<<20)
				if err != nil {
					t.Fatalf("tool %d is not strict JSON: %v", i, err)
				}
				if err := rule.Validate(v); err != nil {
					t.Errorf("tool %d breaks the published rules: %v\n%s", i, err, tool)
				}
				name := toolField(t, format, tool, "name").(string)
				if !names.MatchString(name) || seen[name] {
					t.Errorf("tool name %q: not accepted everywhere, or twice", name)
				}
				seen[name] = true
				capability, ok := set.Mapping[name]
				if c, found := p.Lookup(capability); !ok || !found || strings.ReplaceAll(name, "-", ".") != capability {
					t.Errorf("tool %q maps to %q (%v)", name, capability, c)
				}
				if format == ToolFormatMCP {
					meta := toolField(t, format, tool, "_meta").(map[string]any)
					if meta[MCPCapabilityMeta] != capability {
						t.Errorf("tool %q: _meta %v", name, meta)
					}
				}
			}
		})
	}
}

// toolField reads a member of a tool definition, inside "function" for
// OpenAI's.
func toolField(t *testing.T, format ToolFormat, tool json.RawMessage, key string) any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(tool, &m); err != nil {
		t.Fatal(err)
	}
	if format == ToolFormatOpenAI {
		m = m["function"].(map[string]any)
	}
	return m[key]
}

// The exact shape of each format, for one capability.
func TestToolSetShapes(t *testing.T) {
	p := sealBytes(t, toolsManifest(t))
	want := map[ToolFormat][]string{
		ToolFormatAnthropic: {
			`{"name":"files-read_text-v2","input_schema":{"type":"object"}}`,
			`{"name":"notes-put","description":"Store a note.","input_schema":{"properties":{"text":{"type":"string"}},"required":["text"],"type":"object"}}`,
			`{"name":"weather-get","description":"Current weather for a city.","input_schema":{"additionalProperties":false,"properties":{"city":{"maxLength":64,"type":"string"}},"required":["city"],"type":"object"}}`,
		},
		ToolFormatOpenAI: {
			`{"type":"function","function":{"name":"files-read_text-v2","parameters":{"type":"object"}}}`,
			`{"type":"function","function":{"name":"notes-put","description":"Store a note.","parameters":{"properties":{"text":{"type":"string"}},"required":["text"],"type":"object"}}}`,
			`{"type":"function","function":{"name":"weather-get","description":"Current weather for a city.","parameters":{"additionalProperties":false,"properties":{"city":{"maxLength":64,"type":"string"}},"required":["city"],"type":"object"}}}`,
		},
		ToolFormatMCP: {
			`{"name":"files-read_text-v2","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false},"_meta":{"io.github.apysup/capability":"files.read_text.v2"}}`,
			`{"name":"notes-put","description":"Store a note.","inputSchema":{"properties":{"text":{"type":"string"}},"required":["text"],"type":"object"},"annotations":{"readOnlyHint":false},"_meta":{"io.github.apysup/capability":"notes.put"}}`,
			`{"name":"weather-get","description":"Current weather for a city.","inputSchema":{"additionalProperties":false,"properties":{"city":{"maxLength":64,"type":"string"}},"required":["city"],"type":"object"},"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"_meta":{"io.github.apysup/capability":"weather.get"}}`,
		},
	}
	for format, tools := range want {
		set, err := p.ToolSet(format)
		if err != nil {
			t.Fatal(err)
		}
		for i, tool := range set.Tools {
			if string(tool) != tools[i] {
				t.Errorf("%s tool %d:\n got %s\nwant %s", format, i, tool, tools[i])
			}
		}
	}
	mapping, _ := json.Marshal(mustToolSet(t, p, ToolFormatAnthropic).Mapping)
	if string(mapping) != `{"files-read_text-v2":"files.read_text.v2","notes-put":"notes.put","weather-get":"weather.get"}` {
		t.Fatalf("mapping %s", mapping)
	}
}

func mustToolSet(t *testing.T, p *Plan, format ToolFormat) *ToolSet {
	t.Helper()
	set, err := p.ToolSet(format)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestToolSetRefusals(t *testing.T) {
	p := sealBytes(t, readManifest(t))
	if _, err := p.ToolSet("gemini"); CodeOf(err) != CodeInvalidToolFormat {
		t.Fatalf("unknown format: %v", err)
	}
	// Schemas that are not object schemas, reported together.
	bad := sealBytes(t, mutate(t, readManifest(t), func(m map[string]any) {
		capAt(m, 0)["input_schema"] = map[string]any{"properties": map[string]any{"city": map[string]any{"type": "string"}}}
		capAt(m, 1)["input_schema"] = map[string]any{"type": []any{"object", "null"}}
	}))
	_, err := bad.ToolSet(ToolFormatAnthropic)
	var problems Problems
	if !asProblems(err, &problems) || len(problems) != 2 {
		t.Fatalf("want two problems, got %v", err)
	}
	for _, p := range problems {
		if p.Code != CodeToolSchemaNotObject {
			t.Errorf("%v", p)
		}
	}
	// Two capabilities with one tool name. A sealed Plan cannot hold two
	// (capability names are unique and the mapping is one-to-one); the
	// check stands should the name rules ever widen.
	twice := &Plan{ordered: []*Capability{p.ordered[0], p.ordered[0]}}
	if _, err := twice.ToolSet(ToolFormatMCP); !asProblems(err, &problems) || len(problems) != 1 || problems[0].Code != CodeToolNameCollision {
		t.Fatalf("collision: %v", err)
	}
	for _, name := range []string{"", "Weather.get", "a-b", "a..b", strings.Repeat("a", 65), "é"} {
		if _, err := ToolName(name); CodeOf(err) != CodeInvalidToolName {
			t.Errorf("ToolName(%q): %v", name, err)
		}
	}
}

// The mapping is one-to-one on capability names and its results are tool
// names every API accepts.
func FuzzToolName(f *testing.F) {
	for _, s := range []string{"weather.get", "a", "a_b.c_d", "files.read_text.v2", strings.Repeat("a.", 31) + "bc", "a-b", "A.b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tool, err := ToolName(s)
		if !ValidName(s) {
			if err == nil {
				t.Fatalf("%q is no capability name, yet maps to %q", s, tool)
			}
			return
		}
		if err != nil || !toolNamePattern.MatchString(tool) || strings.ReplaceAll(tool, "-", ".") != s {
			t.Fatalf("%q -> %q, %v", s, tool, err)
		}
	})
}
