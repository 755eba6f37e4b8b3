package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/apysup/apysup/internal/sandbox/native"
	_ "github.com/apysup/apysup/internal/sandbox/native/mainthread" // the main goroutine keeps the main thread (see the package)
)

func TestMain(m *testing.M) {
	native.MaybeInit()
	if os.Getenv(cliEnv) == "1" { // a benchmark runs this binary as the apysup command
		os.Unsetenv(cliEnv)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// run runs the CLI in-process and returns stdout, stderr and the exit code.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	app := newApp(&out, &errOut)
	code := 0
	if err := runApp(app, append([]string{"apysup"}, args...)); err != nil {
		errOut.WriteString(err.Error())
		code = exitCode(err)
	}
	return out.String(), errOut.String(), code
}

const secretPolicy = `{"arguments": {"$comment": "GRANT-SECRET-42", "properties": {"city": {"enum": ["Paris"]}}}}`

func writeManifest(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "manifest.json")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func secretManifest(t *testing.T) string {
	data, err := os.ReadFile("../../examples/plan.json")
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Replace(string(data), `{"arguments": {"properties": {"city": {"enum": ["Paris", "Oslo"]}}}}`, secretPolicy, 1)
	if body == string(data) {
		t.Fatal("example manifest changed; policy not replaced")
	}
	return writeManifest(t, body)
}

func TestPlanCommandsNeverPrintTheGrant(t *testing.T) {
	m := secretManifest(t)
	for _, args := range [][]string{
		{"plan", "seal", m},
		{"plan", "seal", "--json", m},
		{"plan", "tools", m},
		{"plan", "tools", "--format", "anthropic", m},
		{"plan", "tools", "--format", "openai", m},
		{"plan", "tools", "--format", "mcp", m},
		{"plan", "prelude", "--surface", "direct", m},
		{"plan", "prelude", "--surface", "programmatic", "--parent", "toolu_1", m},
		{"plan", "prelude", "--surface", "both", "--parent", "toolu_1", m},
	} {
		out, errOut, code := run(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		if strings.Contains(out+errOut, "GRANT-SECRET-42") {
			t.Fatalf("%v printed the grant policy", args)
		}
	}
	// Nor does a failing seal (the policy is fine, the capability is not).
	bad := strings.Replace(readFile(t, m), `"effect": "read"`, `"effect": "delete"`, 1)
	out, errOut, code := run(t, "plan", "seal", writeManifest(t, bad))
	if code == 0 || strings.Contains(out+errOut, "GRANT-SECRET-42") || !strings.Contains(errOut, "capabilities[0].effect") {
		t.Fatalf("exit %d, out %q, err %q", code, out, errOut)
	}
}

func readFile(t *testing.T, path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestPlanSealPrintsDigest(t *testing.T) {
	out, _, code := run(t, "plan", "seal", "../../examples/plan.json")
	if code != 0 || !strings.HasPrefix(out, "sha256:") || len(strings.TrimSpace(out)) != 71 {
		t.Fatalf("exit %d: %q", code, out)
	}
	js, _, _ := run(t, "plan", "seal", "--json", "../../examples/plan.json")
	if !strings.Contains(js, strings.TrimSpace(out)) || !strings.Contains(js, `"evidence"`) {
		t.Fatalf("json: %s", js)
	}
}

func TestPlanManifestProblemsAllAtOnce(t *testing.T) {
	m := writeManifest(t, `{"schema_version":"apysup.manifest.v1","max_calls":4,
	  "capabilities":[{"name":"a.b","version":"1","effect":"read","playback":"live","handler":{"kind":"builtin","id":"echo","version":"1"}},
	                  {"name":"Bad","version":"1","effect":"nope","playback":"live","handler":{"kind":"builtin","id":"echo","version":"1"}}],
	  "grants":[{"capability":"a.b","policy":{}},{"capability":"zz","policy":{}}]}`)
	_, errOut, code := run(t, "plan", "seal", m)
	for _, want := range []string{"capabilities[1].name", "capabilities[1].effect", "grants[1].capability"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("missing %s in:\n%s", want, errOut)
		}
	}
	if code != 2 {
		t.Fatalf("exit %d", code)
	}
}

func TestPlanPreludeRefusals(t *testing.T) {
	for _, args := range [][]string{
		{"plan", "prelude", "--surface", "sideways", "../../examples/plan.json"},
		{"plan", "prelude", "--surface", "programmatic", "../../examples/plan.json"},
		{"plan", "seal"},
		{"plan", "seal", "/nonexistent/manifest.json"},
	} {
		if _, errOut, code := run(t, args...); code != 2 || errOut == "" {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
	_, errOut, _ := run(t, "plan", "prelude", "--surface", "sideways", "../../examples/plan.json")
	if !strings.Contains(errOut, "invalid_program_surface") {
		t.Fatalf("%q", errOut)
	}
}

type (
	cliContext = cli.Context
	cliCommand = cli.Command
)
