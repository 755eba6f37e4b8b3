package plan

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// oneCapability is a manifest of one capability cap.x of handler kind
// kind, granted policy.
func oneCapability(kind, input, policy string) []byte {
	if input == "" {
		input = `{"type":"object","properties":{"city":{"type":"string"}}}`
	}
	return []byte(`{"schema_version":"apysup.manifest.v1","max_calls":8,"capabilities":[{"name":"cap.x","version":"1",
	  "effect":"read","playback":"live","handler":{"kind":"` + kind + `","id":"x","version":"1"},"input_schema":` + input + `}],
	  "grants":[{"capability":"cap.x","policy":` + policy + `}]}`)
}

func sealOne(t *testing.T, kind, input, policy string) (*Plan, error) {
	t.Helper()
	m, err := ParseManifest(oneCapability(kind, input, policy))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return m.Seal(anyHandlers{})
}

// Every field of a policy is checked when the Plan is sealed; each problem
// names its JSON path under grants[i].policy, and nothing unknown passes.
func TestGrantPolicyRefusedAtSeal(t *testing.T) {
	const at = "grants[0].policy"
	tests := []struct {
		name, kind, policy, path string
	}{
		{"unknown field", "builtin", `{"cities":["Paris"]}`, at + ".cities"},
		{"unknown field beside valid ones", "builtin", `{"max_calls":2,"extra":{}}`, at + ".extra"},
		{"arguments not a schema", "builtin", `{"arguments":{"type":12}}`, at + ".arguments.type"},
		{"arguments nested keyword", "builtin", `{"arguments":{"properties":{"city":{"enum":"Paris"}}}}`, at + ".arguments.properties.city.enum"},
		{"arguments in an array", "builtin", `{"arguments":{"allOf":[{},{"minLength":-1}]}}`, at + ".arguments.allOf[1].minLength"},
		{"arguments a string", "builtin", `{"arguments":"city"}`, at + ".arguments"},
		{"arguments external ref", "builtin", `{"arguments":{"$ref":"https://example.com/s.json"}}`, at + ".arguments"},
		{"arguments keyword typo", "builtin", `{"arguments":{"properties":{"city":{"enun":["Paris"]}}}}`, at + ".arguments.properties.city.enun"},
		{"arguments keyword typo in a list", "builtin", `{"arguments":{"anyOf":[{"type":"object"},{"requried":["city"]}]}}`, at + ".arguments.anyOf[1].requried"},
		{"arguments keyword typo under items", "builtin", `{"arguments":{"properties":{"tags":{"items":{"maxLenght":3}}}}}`, at + ".arguments.properties.tags.items.maxLenght"},
		{"arguments annotation that looks like a rule", "builtin", `{"arguments":{"properties":{"admin":{"readOnly":true}}}}`, at + ".arguments.properties.admin.readOnly"},
		{"arguments default", "builtin", `{"arguments":{"properties":{"city":{"default":"Paris"}}}}`, at + ".arguments.properties.city.default"},
		{"arguments unchecked format", "builtin", `{"arguments":{"properties":{"to":{"format":"idn-email"}}}}`, at + ".arguments.properties.to.format"},
		{"arguments content keyword", "builtin", `{"arguments":{"properties":{"b":{"contentEncoding":"base64"}}}}`, at + ".arguments.properties.b.contentEncoding"},
		{"arguments $id", "builtin", `{"arguments":{"$id":"https://example.com/s"}}`, at + ".arguments.$id"},
		{"arguments other draft", "builtin", `{"arguments":{"$schema":"http://json-schema.org/draft-07/schema#"}}`, at + ".arguments.$schema"},
		{"arguments typo in $defs", "builtin", `{"arguments":{"$defs":{"c":{"maxLenght":1}},"properties":{"city":{"$ref":"#/$defs/c"}}}}`, at + ".arguments.$defs.c.maxLenght"},
		{"max_calls zero", "builtin", `{"max_calls":0}`, at + ".max_calls"},
		{"max_calls too many", "builtin", `{"max_calls":257}`, at + ".max_calls"},
		{"max_calls fraction", "builtin", `{"max_calls":1.5}`, at + ".max_calls"},
		{"max_calls string", "builtin", `{"max_calls":"3"}`, at + ".max_calls"},

		{"http section missing", "http", `{}`, at + ".http"},
		{"http section not an object", "http", `{"http":["127.0.0.1:80"]}`, at + ".http"},
		{"http top-level allowed_hosts (old shape)", "http", `{"allowed_hosts":["127.0.0.1:80"],"http":{"allowed_hosts":["127.0.0.1:80"]}}`, at + ".allowed_hosts"},
		{"http unknown field", "http", `{"http":{"allowed_hosts":["127.0.0.1:80"],"allow_all":true}}`, at + ".http.allow_all"},
		{"http no hosts", "http", `{"http":{}}`, at + ".http.allowed_hosts"},
		{"http empty hosts", "http", `{"http":{"allowed_hosts":[]}}`, at + ".http.allowed_hosts"},
		{"http host without port", "http", `{"http":{"allowed_hosts":["127.0.0.1:80","example.com"]}}`, at + ".http.allowed_hosts[1]"},
		{"http port zero", "http", `{"http":{"allowed_hosts":["127.0.0.1:0"]}}`, at + ".http.allowed_hosts[0]"},
		{"http methods empty", "http", `{"http":{"allowed_hosts":["a:1"],"methods":[]}}`, at + ".http.methods"},
		{"http method unknown", "http", `{"http":{"allowed_hosts":["a:1"],"methods":["GET","TRACE"]}}`, at + ".http.methods[1]"},
		{"http method lower case", "http", `{"http":{"allowed_hosts":["a:1"],"methods":["get"]}}`, at + ".http.methods[0]"},
		{"http prefixes empty", "http", `{"http":{"allowed_hosts":["a:1"],"path_prefixes":[]}}`, at + ".http.path_prefixes"},
		{"http prefix relative", "http", `{"http":{"allowed_hosts":["a:1"],"path_prefixes":["records/"]}}`, at + ".http.path_prefixes[0]"},
		{"http prefix dot dot", "http", `{"http":{"allowed_hosts":["a:1"],"path_prefixes":["/records/../admin"]}}`, at + ".http.path_prefixes[0]"},
		{"http prefix dot", "http", `{"http":{"allowed_hosts":["a:1"],"path_prefixes":["/./records"]}}`, at + ".http.path_prefixes[0]"},
		{"http prefix empty segment", "http", `{"http":{"allowed_hosts":["a:1"],"path_prefixes":["/a//b"]}}`, at + ".http.path_prefixes[0]"},
		{"http prefix percent", "http", `{"http":{"allowed_hosts":["a:1"],"path_prefixes":["/a%2fb"]}}`, at + ".http.path_prefixes[0]"},
		{"http prefix query", "http", `{"http":{"allowed_hosts":["a:1"],"path_prefixes":["/a?b=1"]}}`, at + ".http.path_prefixes[0]"},

		{"kv unknown field", "kv", `{"kv":{"ttl":5}}`, at + ".kv.ttl"},
		{"kv namespace", "kv", `{"kv":{"namespace":"Notes"}}`, at + ".kv.namespace"},
		{"kv key prefix empty", "kv", `{"kv":{"key_prefix":""}}`, at + ".kv.key_prefix"},
		{"kv key prefix control", "kv", `{"kv":{"key_prefix":"a\nb"}}`, at + ".kv.key_prefix"},
		{"kv key prefix too long", "kv", `{"kv":{"key_prefix":"` + strings.Repeat("k", MaxKeyPrefixBytes+1) + `"}}`, at + ".kv.key_prefix"},
		{"kv read_only not a boolean", "kv", `{"kv":{"read_only":"yes"}}`, at + ".kv.read_only"},

		{"exec unknown field", "exec", `{"exec":{"argv":["/bin/cat"]}}`, at + ".exec.argv"},
		{"exec commands empty", "exec", `{"exec":{"commands":[]}}`, at + ".exec.commands"},
		{"exec command relative", "exec", `{"exec":{"commands":["/bin/cat","cat"]}}`, at + ".exec.commands[1]"},
		{"exec command unclean", "exec", `{"exec":{"commands":["/bin/../bin/cat"]}}`, at + ".exec.commands[0]"},
		{"exec max_timeout too long", "exec", `{"exec":{"max_timeout":"2h"}}`, at + ".exec.max_timeout"},
		{"exec max_timeout not a duration", "exec", `{"exec":{"max_timeout":5}}`, at + ".exec.max_timeout"},

		{"kv section on an exec capability", "exec", `{"kv":{"read_only":true}}`, at + ".kv"},
		{"http section on a builtin capability", "builtin", `{"http":{"allowed_hosts":["a:1"]}}`, at + ".http"},
		{"exec section on a kv capability", "kv", `{"exec":{}}`, at + ".exec"},
		{"builtin section", "builtin", `{"builtin":{}}`, at + ".builtin"},
		{"two sections", "kv", `{"kv":{},"exec":{}}`, at + ".exec"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sealOne(t, tc.kind, "", tc.policy)
			var problems Problems
			if !asProblems(err, &problems) {
				t.Fatalf("want a problem at %s, got %v", tc.path, err)
			}
			found := false
			for _, p := range problems {
				if p.Path == tc.path && p.Code == CodeInvalidGrant {
					found = true
				}
			}
			if !found {
				t.Fatalf("no %s at %s in:\n%v", CodeInvalidGrant, tc.path, err)
			}
		})
	}
}

// A valid policy of every shape seals, and its sections read back as
// written (hosts normalised).
func TestGrantPolicyAccepted(t *testing.T) {
	for kind, policy := range map[string]string{
		"builtin": `{"arguments":{"properties":{"city":{"enum":["Paris","Oslo"]}}},"max_calls":3}`,
		"http":    `{"http":{"allowed_hosts":["Example.COM:443","[::1]:8080"],"methods":["GET"],"path_prefixes":["/records/","/v1"]}}`,
		"kv":      `{"kv":{"namespace":"notes","key_prefix":"team/","read_only":true},"max_calls":1}`,
		"exec":    `{"exec":{"commands":["/usr/bin/jq"],"max_timeout":"30s"},"arguments":false}`,
		"other":   `{}`,
	} {
		p, err := sealOne(t, kind, "", policy)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		pol, ok := p.Policy("cap.x")
		if !ok {
			t.Fatalf("%s: no policy", kind)
		}
		g := pol.Grant()
		switch kind {
		case "builtin":
			if pol.MaxCalls() != 3 || g.HTTP() != nil || g.KV() != nil || g.Exec() != nil {
				t.Fatalf("builtin: %+v", g)
			}
		case "http":
			h := g.HTTP()
			if h == nil || strings.Join(h.AllowedHosts, " ") != "example.com:443 [::1]:8080" || !h.AllowsMethod("GET") || h.AllowsMethod("POST") {
				t.Fatalf("http: %+v", h)
			}
		case "kv":
			if k := g.KV(); k == nil || *k != (KVGrant{Namespace: "notes", KeyPrefix: "team/", ReadOnly: true}) || pol.MaxCalls() != 1 {
				t.Fatalf("kv: %+v", k)
			}
		case "exec":
			if e := g.Exec(); e == nil || !e.AllowsCommand("/usr/bin/jq") || e.AllowsCommand("/bin/sh") || e.MaxTimeout != 30*time.Second {
				t.Fatalf("exec: %+v", e)
			}
		case "other":
			if pol.MaxCalls() != 0 {
				t.Fatal("max_calls without a budget")
			}
		}
	}
	if _, ok := sealBytes(t, readManifest(t)).Policy("weather.nope"); ok {
		t.Fatal("a policy for an unknown capability")
	}
}

// No problem of a policy quotes one of its values, whatever the field.
func TestGrantErrorsNeverQuoteValues(t *testing.T) {
	const s = "GRANT-SECRET-99"
	for _, policy := range []string{
		`{"token":"` + s + `"}`,
		`{"arguments":{"properties":{"city":{"enum":"` + s + `"}}}}`,
		`{"arguments":{"$ref":"https://` + s + `.example/s.json"}}`,
		`{"arguments":{"pattern":"(` + s + `"}}`,
		`{"max_calls":"` + s + `"}`,
		`{"http":{"allowed_hosts":["` + s + `"],"methods":["` + s + `"],"path_prefixes":["` + s + `"]}}`,
		`{"kv":{"namespace":"` + s + `","key_prefix":"` + s + "\\n" + `"}}`,
		`{"exec":{"commands":["` + s + `"],"max_timeout":"` + s + `"}}`,
	} {
		for _, kind := range []string{"http", "kv", "exec"} {
			_, err := sealOne(t, kind, "", policy)
			if err == nil {
				t.Fatalf("%s %s sealed", kind, policy)
			}
			if strings.Contains(err.Error(), s) {
				t.Fatalf("%s: the error quotes the policy: %v", policy, err)
			}
		}
	}
}

// A sealed grant's arguments schema refuses with the path of the refused
// argument, made of names the host declared: never a key only the guest
// wrote, never a value.
func TestPolicyCheckArguments(t *testing.T) {
	const input = `{"type":"object","properties":{"city":{"type":"string"},"tags":{"type":"array"},"meta":{"type":"object"},"a/b~c":{}}}`
	tests := []struct {
		name, policy, args string
		ok                 bool
		pointer            string
	}{
		{"no arguments schema", `{}`, `{"city":"Berlin"}`, true, ""},
		{"format is enforced", `{"arguments":{"properties":{"city":{"format":"email"}}}}`, `{"city":"not an address"}`, false, "/city"},
		{"format allows", `{"arguments":{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"city":{"format":"email"}}}}`, `{"city":"a@example.com"}`, true, ""},
		{"$ref into $defs", `{"arguments":{"$defs":{"c":{"enum":["Oslo"]}},"properties":{"city":{"$ref":"#/$defs/c"}}}}`, `{"city":"Rome"}`, false, "/city"},
		{"enum allows", `{"arguments":{"properties":{"city":{"enum":["Paris","Oslo"]}}}}`, `{"city":"Oslo"}`, true, ""},
		{"enum refuses", `{"arguments":{"properties":{"city":{"enum":["Paris","Oslo"]}}}}`, `{"city":"Berlin"}`, false, "/city"},
		{"required", `{"arguments":{"required":["city"]}}`, `{}`, false, "/city"},
		{"array item", `{"arguments":{"properties":{"tags":{"items":{"maxLength":3}}}}}`, `{"tags":["ok","too long"]}`, false, "/tags/1"},
		{"declared only in the policy", `{"arguments":{"properties":{"level":{"maximum":3}}}}`, `{"level":9}`, false, "/level"},
		{"escaped name", `{"arguments":{"properties":{"a/b~c":{"type":"string"}}}}`, `{"a/b~c":1}`, false, "/a~1b~0c"},
		{"guest key under additionalProperties", `{"arguments":{"properties":{"meta":{"additionalProperties":{"type":"integer"}}}}}`,
			`{"meta":{"GUEST-KEY":"x"}}`, false, "/meta"},
		{"guest key under patternProperties", `{"arguments":{"patternProperties":{"^x":{"type":"integer"}}}}`,
			`{"xGUEST":"y"}`, false, ""},
		{"additionalProperties false", `{"arguments":{"properties":{"city":{}},"additionalProperties":false}}`,
			`{"city":"Paris","GUEST-KEY":1}`, false, ""},
		{"propertyNames", `{"arguments":{"propertyNames":{"maxLength":4}}}`, `{"GUEST-KEY":1}`, false, ""},
		{"enum value named like a property", `{"arguments":{"properties":{"meta":{"properties":{"n":{"const":{"properties":{"SECRET":1}}}},"additionalProperties":{"type":"integer"}}}}}`,
			`{"meta":{"SECRET":"x"}}`, false, "/meta"},
		{"false refuses everything", `{"arguments":false}`, `{}`, false, ""},
		{"deepest of several", `{"arguments":{"properties":{"city":{"enum":["Paris"]},"tags":{"items":{"maxLength":1}}}}}`,
			`{"city":"Berlin","tags":["a","bb"]}`, false, "/tags/1"},
		{"least of equally deep", `{"arguments":{"properties":{"city":{"enum":["Paris"]},"tags":{"maxItems":0},"meta":{"maxProperties":0}}}}`,
			`{"city":"Berlin","tags":[1],"meta":{"k":1}}`, false, "/city"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := sealOne(t, "builtin", input, tc.policy)
			if err != nil {
				t.Fatal(err)
			}
			pol, _ := p.Policy("cap.x")
			c, _ := p.Lookup("cap.x")
			args := decodeArgs(t, tc.args)
			if err := c.ValidateInput(args); err != nil {
				t.Fatalf("test premise: the input schema admits %s: %v", tc.args, err)
			}
			for range 20 { // the validator's map order must not change the answer
				pointer, ok := pol.CheckArguments(args)
				if ok != tc.ok || pointer != tc.pointer {
					t.Fatalf("got %v %q, want %v %q", ok, pointer, tc.ok, tc.pointer)
				}
			}
		})
	}
}

func decodeArgs(t testing.TB, s string) any {
	t.Helper()
	var v any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestHTTPGrantCoversPath(t *testing.T) {
	h := &HTTPGrant{PathPrefixes: []string{"/records", "/v1/"}}
	for _, tc := range []struct {
		path string
		open bool
		want bool
	}{
		{"/records", false, true},
		{"/records", true, false}, // "/records" + "X..." could leave the prefix
		{"/records/", true, true},
		{"/records/1", false, true},
		{"/recordsX", false, false},
		{"/recordsX/", true, false},
		{"/v1/", true, true},
		{"/v1", false, false},
		{"/v1x", true, false},
		{"/", true, false},
		{"/admin", false, false},
	} {
		if got := h.CoversPath(tc.path, tc.open); got != tc.want {
			t.Errorf("CoversPath(%q, %v) = %v", tc.path, tc.open, got)
		}
	}
	if !(&HTTPGrant{}).CoversPath("/anything", true) {
		t.Fatal("no path_prefixes must cover every path")
	}
	if !(&KVGrant{KeyPrefix: "team/"}).AllowsKey("team/a") || (&KVGrant{KeyPrefix: "team/"}).AllowsKey("team") || !(&KVGrant{}).AllowsKey("x") {
		t.Fatal("AllowsKey")
	}
}

// Capabilities whose grants differ only outside their handler sections
// share a section; the handler section decides.
func TestGrantSameSection(t *testing.T) {
	grant := func(s string) *Grant {
		g, err := NewGrant(json.RawMessage(s))
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	a := grant(`{"kv":{"key_prefix":"a/","read_only":true},"max_calls":1}`)
	b := grant(`{"max_calls":7,"kv":{"read_only":true, "key_prefix":"a/"}}`)
	c := grant(`{"kv":{"key_prefix":"b/"}}`)
	none := grant(`{}`)
	if !a.SameSection(b) || a.SameSection(c) || a.SameSection(none) || !none.SameSection(grant(`{"max_calls":2}`)) {
		t.Fatal("SameSection")
	}
}

// FuzzPolicyArguments: whatever arguments a guest sends, CheckArguments
// never panics, answers the same twice, and names only declared property
// names and array indices.
func FuzzPolicyArguments(f *testing.F) {
	for _, s := range []string{`{"city":"Berlin"}`, `{"tags":["a","bbbb",3]}`, `{"meta":{"x":{"y":[1]}}}`, `{"zz":1,"city":2}`, `{}`, `[]`, `"x"`} {
		f.Add([]byte(s))
	}
	m, err := ParseManifest(oneCapability("builtin", `{}`, `{"arguments":{"type":"object",
	  "properties":{"city":{"enum":["Paris"]},"tags":{"items":{"type":"string","maxLength":3}},"meta":{"additionalProperties":{"additionalProperties":false}}},
	  "patternProperties":{"^z":{"type":"string"}},"required":["city"]}}`))
	if err != nil {
		f.Fatal(err)
	}
	p, err := m.Seal(anyHandlers{})
	if err != nil {
		f.Fatal(err)
	}
	pol, _ := p.Policy("cap.x")
	declared := map[string]bool{"city": true, "tags": true, "meta": true}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		d := json.NewDecoder(strings.NewReader(string(data)))
		d.UseNumber()
		if d.Decode(&v) != nil {
			return
		}
		pointer, ok := pol.CheckArguments(v)
		again, ok2 := pol.CheckArguments(v)
		if pointer != again || ok != ok2 {
			t.Fatalf("two answers: %q %q", pointer, again)
		}
		if ok && pointer != "" || len(pointer) > MaxPointerBytes+1 {
			t.Fatalf("pointer %q ok %v", pointer, ok)
		}
		for i, seg := range strings.Split(pointer, "/")[1:] {
			if _, isIndex := parseIndex(seg); !(i == 0 && declared[seg]) && !(i > 0 && isIndex) {
				t.Fatalf("pointer %q names %q", pointer, seg)
			}
		}
	})
}
