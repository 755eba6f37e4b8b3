package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/apysup/apysup/cmd/apysup/internal/report"
)

// TestConfigFlag: --config FILE > APYSUP_CONFIG > the search path, a named
// file must exist, and config show lists the files it looked for.
func TestConfigFlag(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	type doc struct {
		ConfigFile       string   `json:"config_file"`
		ConfigFileSource string   `json:"config_file_source"`
		Searched         []string `json:"searched"`
		Settings         []struct{ Name, Value, Source string }
	}
	show := func(args ...string) doc {
		t.Helper()
		out, errOut, code := run(t, append([]string{"config", "show", "--json"}, args...)...)
		var d doc
		if err := json.Unmarshal([]byte(out), &d); err != nil || code != 0 {
			t.Fatalf("%v: exit %d %v: %s", args, code, err, errOut)
		}
		return d
	}
	value := func(d doc, name string) string {
		for _, s := range d.Settings {
			if s.Name == name {
				return s.Value + "/" + s.Source
			}
		}
		return ""
	}
	d := show()
	if d.ConfigFile != "" || d.ConfigFileSource != SourceDefault ||
		strings.Join(d.Searched, ",") != filepath.Join(home, "apysup", "config.json")+",/etc/apysup/config.json" {
		t.Fatalf("search path: %+v", d)
	}
	out, _, _ := run(t, "config", "show")
	if !strings.Contains(out, "config file: none found (default); searched: "+filepath.Join(home, "apysup", "config.json")) {
		t.Errorf("human: %s", out)
	}
	env := write("env.json", `{"cpus": "2"}`)
	flag := write("flag.json", `{"cpus": "0.5"}`)
	t.Setenv("APYSUP_CONFIG", env)
	if d := show(); d.ConfigFile != env || d.ConfigFileSource != SourceEnv || value(d, "cpus") != "2/config" {
		t.Fatalf("env: %+v", d)
	}
	if d := show("--config", flag); d.ConfigFile != flag || d.ConfigFileSource != SourceFlag || value(d, "cpus") != "0.5/config" ||
		strings.Join(d.Searched, ",") != flag {
		t.Fatalf("flag: %+v", d)
	}
	if _, errOut, code := run(t, "config", "show", "--config", filepath.Join(dir, "none.json")); code != ExitUsage || !strings.Contains(errOut, "none.json") {
		t.Fatalf("missing --config file: exit %d %s", code, errOut)
	}
	if _, errOut, code := run(t, "config", "show", "--config", write("bad.json", `{"cpus": "0"}`)); code != ExitUsage || !strings.Contains(errOut, "cpus (from config)") {
		t.Fatalf("bad cpus: exit %d %s", code, errOut)
	}
}

func TestUserMessage(t *testing.T) {
	for in, want := range map[string]string{
		"native: refused (invalid_job): script: open /x: no such file":   "refused (invalid_job): script: open /x: no such file",
		"supervisor: native: create container: denied":                   "create container: denied",
		"the run names plan sha256:1, the manifest seals to sha256:2":    "the run names plan sha256:1, the manifest seals to sha256:2",
		"config: /etc/apysup/config.json: json_unknown_field":            "config: /etc/apysup/config.json: json_unknown_field",
		"m.json:\nplan: max_calls: out of range\ncanonjson: json_syntax": "m.json:\nmax_calls: out of range\njson_syntax",
	} {
		if got := report.UserMessage(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

// anyGoPrefix finds a Go package's prefix anywhere, stricter than what
// userMessage removes (at the start of a line or of a wrapped part).
var anyGoPrefix = regexp.MustCompile(`\b(?:` + report.GoPackages + `): `)

// TestFailingCommandsSayNoGoPackage runs commands that fail in every way
// a user meets (usage, manifest, config, result files, refused runs on
// both backends, sockets) and finds no Go package name prefixing any
// line or any wrapped part of what they print.
func TestFailingCommandsSayNoGoPackage(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // no WASI build: wazero refuses
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	bad := write("bad.json", `{"schema_version":"apysup.manifest.v1","max_calls":0,"capabilities":[{"name":"Bad","version":"1",
	  "effect":"nope","playback":"live","handler":{"kind":"builtin","id":"nosuch","version":"1"}}],"grants":[{"capability":"zz","policy":{}}]}`)
	notJSON, empty := write("nj.json", "not json"), write("empty.json", "{}")
	hidden, ok := write(".hidden.py", "print(1)\n"), write("ok.py", "print(1)\n")
	const m = "../../examples/plan.json"
	for _, args := range [][]string{
		{"run", "--plan", bad, ok},
		{"run", "--plan", notJSON, ok},
		{"run", "--plan", "/nonexistent.json", ok},
		{"run", hidden},
		{"run", "--memory", "1MiB", ok},
		{"run", "--workspace", "/nonexistent", ok},
		{"run", "--backend", "wazero", ok},
		{"run", "--approve", "socket:/nonexistent/x.sock", ok},
		{"run", "--config", notJSON, ok},
		{"plan", "seal", bad},
		{"plan", "tools", notJSON},
		{"plan", "prelude", "--surface", "sideways", m},
		{"receipts", "verify", "--plan", m, notJSON},
		{"receipts", "verify", "--plan", m, empty},
		{"events", "verify", "--plan", m, empty},
		{"approvals", "list", "--socket", "/nonexistent.sock"},
		{"config", "show", "--config", bad},
		{"doctor"},
	} {
		out, errOut, _ := run(t, args...)
		if loc := anyGoPrefix.FindStringIndex(out + errOut); loc != nil {
			t.Errorf("%v says %q:\n%s%s", args, (out + errOut)[loc[0]:loc[1]], out, errOut)
		}
	}
}
