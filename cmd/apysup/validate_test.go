package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// corpusManifest is one manifest of the test corpus; bad ones list the
// exact paths of every problem they must report.
type corpusManifest struct {
	name  string
	body  string
	paths []string // nil for a good manifest
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
			paths: []string{"schema_version", "max_calls", "extra", "capabilities[0].version", "capabilities[0].handler"}},
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
