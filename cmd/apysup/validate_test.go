package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/apysup/apysup/internal/sandbox/supervisor"
	"github.com/apysup/apysup/internal/sandbox/wazero"
	"github.com/apysup/apysup/internal/testenv"
)

// corpusManifest is one manifest of the test corpus; bad ones list the
// exact paths of every problem they must report.
type corpusManifest struct {
	name  string
	body  string
	paths []string // nil for a good manifest
	// structural: the schema itself refuses it (the rest are refused by
	// the value checks that run when it is sealed)
	structural bool
}

// manifestCorpus is every manifest the repository holds (plan/testdata,
// examples/, this package's tests) with its placeholders filled, and a
// table of bad ones.
func manifestCorpus(t *testing.T) []corpusManifest {
	t.Helper()
	dir := t.TempDir()
	fill := strings.NewReplacer("@TOOL@", "/usr/bin/python3.11", "@HOST@", "127.0.0.1:8080", "@PORT@", "8080",
		"@DB@", filepath.Join(dir, "kv.db"))
	var out []corpusManifest
	files, err := filepath.Glob("../../plan/testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("plan/testdata: %v", err)
	}
	files = append(files, "../../examples/plan.json", "../../examples/demo/manifest.template.json")
	for _, f := range files {
		out = append(out, corpusManifest{name: f, body: fill.Replace(readFile(t, f))})
	}
	for name, body := range map[string]string{"handlersManifest": handlersManifest, "approvalManifest": approvalManifest} {
		out = append(out, corpusManifest{name: name, body: fill.Replace(body)})
	}
	const head = `{"schema_version": "apysup.manifest.v1", "max_calls": 4, "capabilities": [`
	const echo = `"handler": {"kind": "builtin", "id": "echo", "version": "1"}`
	for _, bad := range []corpusManifest{
		{name: "unknown builtin", body: head + `{"name": "a.b", "version": "1", "effect": "read", "playback": "live",
			"handler": {"kind": "builtin", "id": "nope", "version": "1"}}], "grants": [{"capability": "a.b", "policy": {}}]}`,
			paths: []string{"capabilities[0].handler.id"}},
		{name: "unknown kind", body: head + `{"name": "a.b", "version": "1", "effect": "read", "playback": "live",
			"handler": {"kind": "ftp", "id": "x", "version": "1"}}], "grants": [{"capability": "a.b", "policy": {}}]}`,
			paths: []string{"capabilities[0].handler.kind"}},
		{name: "http without a grant", body: head + `{"name": "a.b", "version": "1", "effect": "read", "playback": "captured",
			"handler": {"kind": "http", "id": "x", "version": "1", "config": {"method": "GET", "url": "http://127.0.0.1:1/x"}}}], "grants": []}`,
			paths: []string{"capabilities[0].handler"}},
		{name: "several problems", body: `{"schema_version": "apysup.manifest.v1", "max_calls": 0, "capabilities": [
			{"name": "a.b", "version": "1", "effect": "read", "playback": "live", "handler": {"kind": "builtin", "id": "nope", "version": "1"}},
			{"name": "c.d", "version": "1", "effect": "bogus", "playback": "live", ` + echo + `},
			{"name": "e.f", "version": "1", "effect": "read", "playback": "live",
			 "handler": {"kind": "kv", "id": "k", "version": "1", "config": {"op": "zap", "path": "/nonexistent-dir/x.db"}}}],
			"grants": [{"capability": "a.b", "policy": {"http": {}}}, {"capability": "zz", "policy": {}}]}`,
			paths: []string{"max_calls", "capabilities[1].effect", "capabilities[0].handler.id", "grants[0].policy.http.allowed_hosts",
				"grants[1].capability", "capabilities[2].handler.config.op", "capabilities[2].handler.config.path"}},
		{name: "structure", body: `{"schema_version": "apysup.manifest.v2", "max_calls": "4", "capabilities": [{"name": "a.b"}], "extra": 1}`,
			paths: []string{"schema_version", "max_calls", "extra", "capabilities[0].version", "capabilities[0].handler"}, structural: true},
		{name: "handler config not an object", body: head + `{"name": "a.b", "version": "1", "effect": "read", "playback": "live",
			"handler": {"kind": "builtin", "id": "echo", "version": "1", "config": []}}], "grants": [{"capability": "a.b", "policy": {}}]}`,
			paths: []string{"capabilities[0].handler.config"}, structural: true},
		{name: "grant without policy", body: head + `{"name": "a.b", "version": "1", "effect": "read", "playback": "live", ` + echo + `}],
			"grants": [{"capability": "a.b"}]}`, paths: []string{"grants[0].policy"}, structural: true},
		{name: "python collision", body: head + `{"name": "a.b", "version": "1", "effect": "read", "playback": "live", ` + echo + `,
			"python": {"module": "m", "function": "f"}}, {"name": "c.d", "version": "1", "effect": "read", "playback": "live", ` + echo + `,
			"python": {"module": "m", "function": "f"}}], "grants": [{"capability": "a.b", "policy": {}}, {"capability": "c.d", "policy": {}}]}`,
			paths: []string{"capabilities[1].python"}},
	} {
		bad.name = "bad: " + bad.name
		out = append(out, bad)
	}
	return out
}

// `plan seal` and `run` accept exactly the same manifests: each corpus
// manifest seals if and only if it runs (its handlers build), a bad one is
// refused by both with the same problems, and a manifest with several
// problems reports every one at its exact path.
func TestSealAndRunAcceptTheSameManifests(t *testing.T) {
	for _, c := range manifestCorpus(t) {
		t.Run(c.name, func(t *testing.T) {
			path := writeManifest(t, c.body)
			_, sealErr := sealManifest(path)
			_, _, closer, runErr := loadPlan(path)
			if closer != nil {
				closer.Close()
			}
			if (sealErr == nil) != (runErr == nil) || (sealErr != nil && sealErr.Error() != runErr.Error()) {
				t.Fatalf("seal and run disagree:\nseal: %v\nrun:  %v", sealErr, runErr)
			}
			if c.paths == nil {
				if sealErr != nil {
					t.Fatalf("a corpus manifest is refused: %v", sealErr)
				}
				return
			}
			if sealErr == nil {
				t.Fatal("a bad manifest seals")
			}
			lines := strings.Split(sealErr.Error(), "\n")[1:] // after "PATH:"
			for _, p := range c.paths {
				found := false
				for _, l := range lines {
					found = found || strings.HasPrefix(l, p+": ")
				}
				if !found {
					t.Errorf("no problem at %s in:\n%v", p, sealErr)
				}
			}
			for _, l := range lines {
				if p, _, _ := strings.Cut(l, ": "); strings.HasPrefix(p, ".") || strings.HasSuffix(p, ".") || strings.Contains(p, "..") {
					t.Errorf("a stray dot: %s", l)
				}
			}
		})
	}
}

// compileSchemaFile compiles one of the published schemas (docs/schemas)
// as an editor would: by itself, no network.
func compileSchemaFile(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	data, err := os.ReadFile("../../docs/schemas/" + name)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(name, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return sch
}

func validateJSON(sch *jsonschema.Schema, data string) error {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(data))
	if err != nil {
		return err
	}
	return sch.Validate(doc)
}

// docs/schemas/manifest.schema.json accepts every good manifest of the
// corpus and refuses the structurally bad ones.
func TestManifestCorpusAgainstSchema(t *testing.T) {
	sch := compileSchemaFile(t, "manifest.schema.json")
	structural := 0
	for _, c := range manifestCorpus(t) {
		err := validateJSON(sch, c.body)
		switch {
		case c.paths == nil && err != nil:
			t.Errorf("%s: a good manifest fails the schema: %v", c.name, err)
		case c.structural && err == nil:
			t.Errorf("%s: a structurally bad manifest passes the schema", c.name)
		case c.paths != nil && !c.structural && err != nil:
			t.Errorf("%s: a value problem fails the schema (it belongs to sealing): %v", c.name, err)
		}
		if c.structural {
			structural++
		}
	}
	if structural == 0 {
		t.Fatal("no structurally bad manifest in the corpus")
	}
}

// checkRunResult validates one printed RunResult against
// docs/schemas/runresult.schema.json.
func checkRunResult(t *testing.T, out string) {
	t.Helper()
	if err := validateJSON(compileSchemaFile(t, "runresult.schema.json"), out); err != nil {
		t.Fatalf("the RunResult does not match docs/schemas/runresult.schema.json: %v\n%s", err, out)
	}
}

// Every status a CLI run can end in, on both backends, prints a RunResult
// that matches docs/schemas/runresult.schema.json (the other tests'
// RunResults are checked by runJSON); and the schema is not vacuous: a
// RunResult with a wrong field fails it. killed (the host ended the run:
// a cancelled context) and setup_failed need a fault the CLI cannot
// cause; their RunResults have no field the others lack.
func TestRunResultsMatchTheSchema(t *testing.T) {
	needNative(t)
	backends := []string{"native"}
	cache, err := wazero.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	_, err = wazero.Locate(cache)
	var unavailable *wazero.UnavailableError
	if !errors.As(err, &unavailable) {
		backends = append(backends, "wazero")
	}
	testenv.Need(t, len(backends) == 2, "the WASI CPython build (make wasi-python)")
	call := "import weather\nprint(weather.get(city='Paris'))\nimport agent_runtime\nagent_runtime.set_result({'n': 1})\n"
	cases := []struct {
		status string
		body   string
		args   []string
		native bool // only natively (wazero has no signals)
	}{
		{"ok", call, []string{"--plan", "../../examples/plan.json", "--surface", "both", "--export", "EXPORT"}, false},
		{"error", "raise ValueError('nope')\n", nil, false},
		{"timeout", "while True: pass\n", []string{"--timeout", "1s"}, false},
		{"memory_limit", "b = bytearray(512 << 20)\n", []string{"--memory", "64MiB"}, false},
		{"refused", "print(1)\n", []string{"--memory", "1MiB"}, false},
		{"error", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", nil, true}, // killed_by_signal
	}
	var sample string
	for _, backend := range backends {
		for _, tc := range cases {
			if tc.native && backend != "native" {
				continue
			}
			t.Run(backend+" "+tc.status+" "+strings.Fields(tc.body)[0], func(t *testing.T) {
				args := []string{"run", "--json", "--backend", backend}
				for _, a := range tc.args {
					if a == "EXPORT" {
						a = filepath.Join(t.TempDir(), "out")
					}
					args = append(args, a)
				}
				out, errOut, _ := run(t, append(args, script(t, tc.body))...)
				var res supervisor.Result
				if err := json.Unmarshal([]byte(out), &res); err != nil || string(res.Status) != tc.status {
					t.Fatalf("status %q, want %s: %v\n%s\n%s", res.Status, tc.status, err, out, errOut)
				}
				checkRunResult(t, out)
				if tc.status == "ok" {
					if len(res.Receipts) == 0 || res.Workspace == nil || res.Result == nil {
						t.Fatalf("the ok case lacks receipts, a workspace receipt or a result: %s", out)
					}
					sample = out
				}
			})
		}
	}
	if sample == "" {
		t.Fatal("no ok RunResult")
	}
	sch := compileSchemaFile(t, "runresult.schema.json")
	for _, spoil := range []func(m map[string]any){
		func(m map[string]any) { m["status"] = "fine" },
		func(m map[string]any) { m["surprise"] = 1 },
		func(m map[string]any) { delete(m, "receipts") },
		func(m map[string]any) { m["receipts"].([]any)[0].(map[string]any)["outcome"] = "maybe" },
	} {
		var m map[string]any
		if err := json.Unmarshal([]byte(sample), &m); err != nil {
			t.Fatal(err)
		}
		spoil(m)
		bad, _ := json.Marshal(m)
		if validateJSON(sch, string(bad)) == nil {
			t.Errorf("a spoiled RunResult passes the schema: %s", bad)
		}
	}
}
