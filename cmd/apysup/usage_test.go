package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apysup/apysup/internal/sandbox/doctor"
)

// TestUsageErrorsExit2: a command line apysup cannot run exits 2, says
// why on stderr and prints nothing on stdout; run checks its command line
// before it seals the Plan or starts a sandbox.
func TestUsageErrorsExit2(t *testing.T) {
	const m = "../../examples/plan.json"
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"plan", "frobnicate", m}, `unknown command "frobnicate"`},
		{[]string{"--bogus"}, "bogus"},
		{[]string{"plan", "seal", "--bogus", m}, "bogus"},
		{[]string{"plan", "seal", m, "--bogus"}, "bogus"},
		{[]string{"plan", "seal"}, "exactly one MANIFEST"},
		{[]string{"plan", "seal", m, m}, "exactly one MANIFEST"},
		{[]string{"receipts", "verify", "result.json"}, "--plan FILE is required"},
		{[]string{"events", "verify", "--plan", m}, "exactly one RESULT.json"},
		{[]string{"doctor", "extra"}, `unexpected argument "extra"`},
		{[]string{"version", "extra"}, `unexpected argument "extra"`},
		{[]string{"run"}, "expected SCRIPT"},
		{[]string{"run", "--bogus", "x.py"}, "bogus"},
		{[]string{"run", "--timeout"}, "flag needs an argument"},
		{[]string{"run", "-c"}, "flag needs an argument"},
		{[]string{"run", "--plan", m, "/nonexistent/script.py"}, "script /nonexistent/script.py"},
		{[]string{"run", "--timeout", "forever", "../../examples/hello.py"}, "timeout (from flag)"},
	}
	for _, tc := range cases {
		out, errOut, code := run(t, tc.args...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q (want %q)", tc.args, code, out, errOut, tc.want)
		}
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, _, code := run(t, args...)
		if code != 0 || !strings.HasPrefix(out, "apysup version ") || !strings.Contains(out, ", commit ") {
			t.Errorf("%v: exit %d %q", args, code, out)
		}
	}
	defer func(c string) { commit = c }(commit)
	commit = "0123abc"
	if out, _, _ := run(t, "version", "--json"); schemaOf(t, out) != "apysup.version.v1" || !strings.Contains(out, `"commit": "0123abc"`) {
		t.Errorf("%s", out)
	}
}

// schemaOf is the schema_version of a JSON document, which must be its first member.
func schemaOf(t *testing.T, doc string) string {
	t.Helper()
	var v struct {
		SchemaVersion string `json:"schema_version"`
	}
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, doc)
	}
	if !strings.HasPrefix(strings.TrimSpace(doc), `{`+"\n"+`  "schema_version"`) {
		t.Errorf("schema_version is not the first member: %.80s", doc)
	}
	return v.SchemaVersion
}

// TestJSONDocumentsNameTheirSchema: every document --json prints carries a
// schema_version (approvals list is checked in TestRunApprovalsOverSocket).
func TestJSONDocumentsNameTheirSchema(t *testing.T) {
	const m = "../../examples/plan.json"
	cases := map[string][]string{
		"apysup.plan_seal.v1":  {"plan", "seal", m, "--json"},
		"apysup.plan_tools.v2": {"plan", "tools", m, "--format", "anthropic"},
		"apysup.config.v1":     {"config", "show", "--json"},
		"apysup.doctor.v1":     {"doctor", "--json"},
		"apysup.version.v1":    {"version", "--json"},
	}
	native := doctor.Run(t.Context()).OK && os.Geteuid() == 0
	if native {
		out, errOut, code := run(t, "run", "--json", "--plan", m, "../../examples/hello.py")
		if code != 0 {
			t.Fatalf("run: exit %d %s", code, errOut)
		}
		if got := schemaOf(t, out); got != "apysup.run_result.v1" {
			t.Errorf("run: %q", got)
		}
		result := filepath.Join(t.TempDir(), "result.json")
		os.WriteFile(result, []byte(out), 0o600)
		cases["apysup.receipts_verify.v1"] = []string{"receipts", "verify", result, "--plan", m, "--json"}
		cases["apysup.events_verify.v1"] = []string{"events", "verify", result, "--plan", m, "--json"}
	}
	for want, args := range cases {
		out, errOut, _ := run(t, args...)
		if got := schemaOf(t, out); got != want {
			t.Errorf("%v: schema_version %q, want %q (%s)", args, got, want, errOut)
		}
	}
	if native {
		out, _, _ := run(t, cases["apysup.receipts_verify.v1"]...)
		if !strings.Contains(out, `"problems": []`) {
			t.Errorf("receipts verify: no problems is not []: %s", out)
		}
	}
}
