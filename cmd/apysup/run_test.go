package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/cmd/apysup/internal/report"
	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/doctor"
	"github.com/apysup/apysup/internal/sandbox/supervisor"
	"github.com/apysup/apysup/internal/sandbox/wazero"
	"github.com/apysup/apysup/internal/testenv"
)

// needNative stops a test unless the native backend can run here.
func needNative(t testing.TB) {
	t.Helper()
	testenv.NeedRoot(t)
	r := doctor.Run(t.Context())
	if f := r.FirstFailure(); f != nil {
		testenv.Need(t, false, "native backend: "+f.Status+": "+f.Detail)
	}
}

// needWASI skips (fails under APYSUP_REQUIRE_ALL=1) without the WASI
// CPython build.
func needWASI(t testing.TB) {
	t.Helper()
	_, err := wazero.Locate("")
	testenv.Need(t, err == nil, "the WASI CPython build ("+wazero.BuildCommand+")")
}

func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "main.py")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runJSON(t *testing.T, args ...string) (*supervisor.Result, int, string) {
	t.Helper()
	out, errOut, code := run(t, append([]string{"run", "--json"}, args...)...)
	var res supervisor.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("run %v: exit %d, not JSON: %v\nstdout %s\nstderr %s", args, code, err, out, errOut)
	}
	checkRunResult(t, out)
	return &res, code, errOut
}

const approvalManifest = `{"schema_version": "apysup.manifest.v1", "max_calls": 8,
 "capabilities": [{"name": "notes.put", "version": "1", "description": "Store a note.", "effect": "write", "playback": "live",
   "handler": {"kind": "builtin", "id": "echo", "version": "1"},
   "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
   "python": {"module": "notes", "function": "put"}, "approval": {"lease_seconds": 30}}],
 "grants": [{"capability": "notes.put", "policy": {}}]}`

const notesScript = `
import agent_runtime, notes
try:
    print(notes.put(text="buy milk"))
except agent_runtime.CapabilityError as e:
    print("refused:", e.error_code)
`

func TestRunHelloNative(t *testing.T) {
	needNative(t)
	res, code, _ := runJSON(t, "--plan", "../../examples/plan.json", "../../examples/hello.py")
	if code != 0 || res.Status != "ok" || res.Backend != "native" || res.BackendSource != SourceDefault {
		t.Fatalf("exit %d: %+v", code, res)
	}
	// The grant policy appears in no output of a run, summary or JSON.
	secret := secretManifest(t)
	for _, args := range [][]string{{"run", "--plan", secret, "../../examples/hello.py"}, {"run", "--json", "--plan", secret, "../../examples/hello.py"}} {
		out, errOut, code := run(t, args...)
		if code != 0 || strings.Contains(out+errOut, "GRANT-SECRET-42") {
			t.Fatalf("%v: exit %d, or the grant leaked:\n%s\n%s", args, code, out, errOut)
		}
	}
	if !strings.Contains(res.Stdout, "hello from cpython 3.11.2") || canonical(t, res.Result) != `{"answer":{"echo":{"city":"Paris"}},"city":"Paris"}` {
		t.Fatalf("stdout %q result %s", res.Stdout, res.Result)
	}
	if len(res.Receipts) != 1 || res.Receipts[0].CallID != "main:program:1" || res.Receipts[0].Outcome != "ok" || res.Receipts[0].PlanSHA256 != res.PlanSHA256 {
		t.Fatalf("receipts %+v", res.Receipts)
	}
	if res.Workspace == nil || !res.Workspace.Verify() || res.Workspace.Disposition != "discarded" {
		t.Fatalf("workspace %+v", res.Workspace)
	}
}

func TestRunApprovalModes(t *testing.T) {
	needNative(t)
	m := writeManifest(t, approvalManifest)
	s := script(t, notesScript)
	res, code, _ := runJSON(t, "--plan", m, "--approve", "auto", s)
	if code != 0 || !strings.Contains(res.Stdout, "{'echo': {'text': 'buy milk'}}") || res.Receipts[0].ApprovalRequestID == "" {
		t.Fatalf("auto: exit %d %+v", code, res)
	}
	if got := choice(t, res, "approve"); got != [2]string{"auto", SourceFlag} {
		t.Errorf("approve read back as %v", got)
	}
	res, code, _ = runJSON(t, "--plan", m, "--approve", "deny", s)
	if code != 0 || !strings.Contains(res.Stdout, "refused: approval_rejected") || res.Receipts[0].Outcome != "denied" {
		t.Fatalf("deny: exit %d %+v", code, res)
	}
	// Without a terminal the default is deny, and the result says so; the
	// environment and a config file (APYSUP_CONFIG) select it too.
	res, _, _ = runJSON(t, "--plan", m, s)
	if got := choice(t, res, "approve"); got != [2]string{"deny", SourceDefault} || !strings.Contains(res.Stdout, "refused: approval_rejected") {
		t.Errorf("default approval mode read back as %v: %s", got, res.Stdout)
	}
	// The summary says why, and how to choose; an explicit deny needs no such note.
	if out, _, _ := run(t, "run", "--plan", m, s); !strings.Contains(out, "1 call(s) needing approval were denied: nobody could be asked") ||
		!strings.Contains(out, "--approve auto|prompt|socket:PATH or APYSUP_APPROVE") {
		t.Errorf("summary without a terminal:\n%s", out)
	}
	if out, _, _ := run(t, "run", "--approve", "deny", "--plan", m, s); strings.Contains(out, "nobody could be asked") {
		t.Errorf("summary with --approve deny:\n%s", out)
	}
	cfg := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(cfg, []byte(`{"approve": "auto"}`), 0o644)
	t.Setenv("APYSUP_CONFIG", cfg)
	res, _, _ = runJSON(t, "--plan", m, s)
	if choice(t, res, "approve") != [2]string{"auto", SourceConfig} || choice(t, res, "config_file") != [2]string{cfg, SourceEnv} ||
		!strings.Contains(res.Stdout, "buy milk") {
		t.Errorf("config: approve %v, config file %v: %s", choice(t, res, "approve"), choice(t, res, "config_file"), res.Stdout)
	}
	t.Setenv("APYSUP_APPROVE", "deny")
	if res, _, _ = runJSON(t, "--plan", m, s); choice(t, res, "approve") != [2]string{"deny", SourceEnv} {
		t.Errorf("env: approve %v", choice(t, res, "approve"))
	}
}

// choice is the value and source of one choice the result reads back.
func choice(t *testing.T, res *supervisor.Result, name string) [2]string {
	t.Helper()
	for _, c := range res.Choices {
		if c.Name == name {
			return [2]string{c.Value, c.Source}
		}
	}
	t.Fatalf("no choice %q in %+v", name, res.Choices)
	return [2]string{}
}

func TestRunStatusesAndExitCodes(t *testing.T) {
	needNative(t)
	cases := []struct {
		name, body string
		args       []string
		status     string
		code       int
		check      func(t *testing.T, r *supervisor.Result)
	}{
		{"exit status", "import sys\nsys.exit(3)\n", nil, "error", 3, nil},
		{"exception", "raise ValueError('nope')\n", nil, "error", 1, func(t *testing.T, r *supervisor.Result) {
			if r.GuestError == nil || r.GuestError.Type != "ValueError" || r.GuestError.Message != "nope" {
				t.Fatalf("guest error %+v", r.GuestError)
			}
		}},
		{"timeout", "while True: pass\n", []string{"--timeout", "1s"}, "timeout", ExitTimeout, nil},
		{"forged host field", "import agent_runtime\nagent_runtime.set_result({'receipts': []})\n", nil, "error", 1, func(t *testing.T, r *supervisor.Result) {
			if r.ErrorCode != "guest_forged_host_field" || r.Result != nil {
				t.Fatalf("%+v", r)
			}
		}},
		{"empty plan denies", "import agent_runtime\ntry:\n    agent_runtime._capability_call('x.y', {})\nexcept agent_runtime.CapabilityError as e:\n    print(e.error_code)\n", nil, "ok", 0,
			func(t *testing.T, r *supervisor.Result) {
				if strings.TrimSpace(r.Stdout) != "unknown_capability" || r.Receipts[0].Outcome != "denied" {
					t.Fatalf("%+v", r)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, code, _ := runJSON(t, append(tc.args, script(t, tc.body))...)
			if string(res.Status) != tc.status || code != tc.code {
				t.Fatalf("status %s exit %d, want %s %d: %+v", res.Status, code, tc.status, tc.code, res)
			}
			if tc.check != nil {
				tc.check(t, res)
			}
		})
	}
}

func TestRunWorkspaceExport(t *testing.T) {
	needNative(t)
	seed := t.TempDir()
	os.WriteFile(filepath.Join(seed, "input.txt"), []byte("21"), 0o644)
	export := filepath.Join(t.TempDir(), "out")
	s := script(t, "n = int(open('input.txt').read())\nopen('answer.txt', 'w').write(str(n * 2))\n")
	res, code, _ := runJSON(t, "--workspace", seed, "--export", export, s)
	if code != 0 || res.Workspace == nil || res.Workspace.Disposition != "exported" || res.Workspace.EntryCount != 2 {
		t.Fatalf("exit %d: %+v %+v", code, res, res.Workspace)
	}
	if got, _ := os.ReadFile(filepath.Join(export, "answer.txt")); string(got) != "42" {
		t.Fatalf("exported %q", got)
	}
	if choice(t, res, "workspace") != [2]string{seed, SourceFlag} || choice(t, res, "export") != [2]string{export, SourceFlag} {
		t.Errorf("choices %+v", res.Choices)
	}
	if got, _ := os.ReadFile(filepath.Join(seed, "input.txt")); string(got) != "21" {
		t.Fatal("the seed directory was changed")
	}
	// A second export to the same place is refused, recorded, not overwritten.
	res, _, _ = runJSON(t, "--workspace", seed, "--export", export, s)
	if res.Workspace.Disposition != "discarded" || res.Workspace.ErrorCode != "workspace_target_exists" {
		t.Fatalf("%+v", res.Workspace)
	}
}

func TestSelectionPrecedence(t *testing.T) {
	cfgHome := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgHome)
	os.MkdirAll(filepath.Join(cfgHome, "apysup"), 0o755)
	show := func() map[string][2]string {
		out, errOut, code := run(t, "config", "show", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var doc struct {
			Settings []struct{ Name, Value, Source string }
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		got := map[string][2]string{}
		for _, s := range doc.Settings {
			got[s.Name] = [2]string{s.Value, s.Source}
		}
		return got
	}
	if got := show(); got["backend"] != [2]string{"native", "default"} || got["timeout"] != [2]string{"30s", "default"} {
		t.Fatalf("defaults: %v", got)
	}
	os.WriteFile(filepath.Join(cfgHome, "apysup", "config.json"), []byte(`{"backend":"wazero","timeout":"5s"}`), 0o644)
	if got := show(); got["backend"] != [2]string{"wazero", "config"} || got["timeout"] != [2]string{"5s", "config"} {
		t.Fatalf("config: %v", got)
	}
	t.Setenv("APYSUP_TIMEOUT", "7s")
	if got := show(); got["timeout"] != [2]string{"7s", "env"} || got["backend"] != [2]string{"wazero", "config"} {
		t.Fatalf("env: %v", got)
	}
	sel, err := selectSettingsFor(t, "--timeout", "9s")
	if err != nil || sel.values["timeout"] != "9s" || sel.sources["timeout"] != SourceFlag || sel.sources["backend"] != SourceConfig {
		t.Fatalf("flag: %+v %v", sel, err)
	}
	t.Setenv("APYSUP_BACKEND", "qemu")
	if _, errOut, code := run(t, "config", "show"); code != 2 || !strings.Contains(errOut, "backend (from env)") {
		t.Fatalf("bad env value: exit %d %s", code, errOut)
	}
	os.WriteFile(filepath.Join(cfgHome, "apysup", "config.json"), []byte(`{"backend":"native","extra":1}`), 0o644)
	t.Setenv("APYSUP_BACKEND", "")
	if _, errOut, code := run(t, "config", "show"); code != 2 || !strings.Contains(errOut, "json_unknown_field") {
		t.Fatalf("bad config: exit %d %s", code, errOut)
	}
}

func canonical(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	c, err := canonjson.Canonical(raw)
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return string(c)
}

// selectSettingsFor parses run flags and returns the selection.
func selectSettingsFor(t *testing.T, args ...string) (*selection, error) {
	var sel *selection
	var selErr error
	cmd := runCommand()
	cmd.Action = func(c *cliContext) error { sel, selErr = selectSettings(c); return nil }
	app := newApp(os.Stdout, os.Stderr)
	app.Commands = []*cliCommand{cmd}
	if err := app.Run(append([]string{"apysup", "run"}, append(args, "x.py")...)); err != nil {
		t.Fatal(err)
	}
	return sel, selErr
}

// The workspace is a bounded tmpfs: a guest can neither fill the host's
// disk nor learn its free space, and runs out of room with ENOSPC.
func TestRunWorkspaceBounded(t *testing.T) {
	needNative(t)
	s := script(t, `
import errno, os
st = os.statvfs("/workspace")
print("size_mib", st.f_blocks * st.f_frsize // (1 << 20))
written = 0
chunk = b"x" * (1 << 20)
try:
    for n in range(10):  # files of 100 MiB: below the per-file limit, above the workspace
        with open("big%d.bin" % n, "wb") as f:
            for _ in range(100):
                f.write(chunk)
                f.flush()
                written += len(chunk)
except OSError as e:
    print("stopped", errno.errorcode[e.errno])
print("written_mib_at_most", (written >> 20) <= 256)
for n in range(10):
    if os.path.exists("big%d.bin" % n):
        os.remove("big%d.bin" % n)
made = 0
try:
    while made < 100000:
        open("f%d" % made, "w").close()
        made += 1
except OSError as e:
    print("files_stopped", errno.errorcode[e.errno], made <= 16384)
`)
	res, code, _ := runJSON(t, "--memory", "1GiB", s)
	want := "size_mib 256\nstopped ENOSPC\nwritten_mib_at_most True\nfiles_stopped ENOSPC True\n"
	if code != 0 || res.Stdout != want {
		t.Fatalf("exit %d, stdout %q, want %q (%+v)", code, res.Stdout, want, res)
	}
	// The full workspace exceeds the snapshot budget or not, but the run
	// reports its workspace either way, and nothing is exported.
	if res.Workspace == nil || res.Workspace.Disposition != "discarded" {
		t.Fatalf("%+v", res.Workspace)
	}
}

// A guest cannot drive the user's terminal: on a terminal its streamed
// text is escaped (a character split between two chunks stays whole);
// into a pipe it passes byte for byte. The summary escapes what it shows.
func TestStreamsAndSummaryEscapeGuestText(t *testing.T) {
	chunks := []string{"red \x1b[31mtext\x1b[0m\n\tindented é", "\xe2\x82", "\xac end"}
	var term, pipe, errTerm strings.Builder
	onTerm := report.NewStreams(&term, true, &errTerm, true)
	onPipe := report.NewStreams(&pipe, false, io.Discard, false)
	for _, c := range chunks {
		onTerm.Output(sandbox.Stdout, []byte(c))
		onPipe.Output(sandbox.Stdout, []byte(c))
	}
	onTerm.Output(sandbox.Stderr, []byte("Boom: \x1b]52;c;ZXZpbA==\x07\n"))
	onTerm.End()
	onPipe.End()
	if want := `red \u001b[31mtext\u001b[0m` + "\n\tindented é€ end\n"; term.String() != want {
		t.Fatalf("terminal stdout %q, want %q", term.String(), want)
	}
	if strings.ContainsAny(errTerm.String(), "\x1b\x07") || !strings.HasPrefix(errTerm.String(), "Boom: ") {
		t.Fatalf("terminal stderr %q", errTerm.String())
	}
	if want := strings.Join(chunks, "") + "\n"; pipe.String() != want {
		t.Fatalf("pipe %q, want %q", pipe.String(), want)
	}
	res := &supervisor.Result{Status: "error", ExitCode: 1, Stderr: "other\n",
		GuestError: &supervisor.GuestError{Type: "Boom", Message: "\x1b[2J", Traceback: "Traceback (most recent call last):\n  File \"x\x1b[2J\"\nBoom: \x1b[2J\n"}}
	var summary strings.Builder
	report.Summary(&summary, shownResult(t, res), "")
	if strings.ContainsAny(summary.String(), "\x1b\x07") || !strings.Contains(summary.String(), "traceback\n          Traceback (most recent call last):\n") {
		t.Fatalf("summary %q", summary.String())
	}
}

// TestExitStatus: only the host's verdicts exit with the reserved statuses.
func TestExitStatus(t *testing.T) {
	cases := []struct {
		status sandbox.Status
		exit   int
		want   int
	}{
		{sandbox.StatusOK, 0, 0},
		{sandbox.StatusError, 3, 3},
		{sandbox.StatusError, 139, 139}, // SIGSEGV
		{sandbox.StatusError, ExitTimeout, 1},
		{sandbox.StatusError, ExitMemoryLimit, 1},
		{sandbox.StatusError, ExitKilled, 1}, // the guest's own SIGKILL
		{sandbox.StatusError, ExitRefused, 1},
		{sandbox.StatusError, ExitSetupFailed, 1},
		{sandbox.StatusError, -1, 1},
		{sandbox.StatusError, 300, 1},
		{sandbox.StatusTimeout, -1, ExitTimeout},
		{sandbox.StatusMemoryLimit, 137, ExitMemoryLimit},
		{sandbox.StatusKilled, -1, ExitKilled},
		{sandbox.StatusRefused, -1, ExitRefused},
		{sandbox.StatusSetupFailed, -1, ExitSetupFailed},
	}
	for _, tc := range cases {
		if got := report.ExitStatus(shownResult(t, &supervisor.Result{Status: tc.status, ExitCode: tc.exit})); got != tc.want {
			t.Errorf("%s exit %d: exit status %d, want %d", tc.status, tc.exit, got, tc.want)
		}
	}
}

// shownResult is the result as the summary and the exit status read it:
// through its JSON document, as reportRun and the early client do.
func shownResult(t *testing.T, res *supervisor.Result) *report.Result {
	t.Helper()
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	shown, err := report.FromJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	return shown
}

// TestReportReadsTheRunResult: every field report.Result reads is in the
// RunResult document under the same name: a result with every field set
// leaves none of report.Result's zero.
func TestReportReadsTheRunResult(t *testing.T) {
	res := &supervisor.Result{RunID: "r", Backend: "native", BackendSource: "flag", PlanSHA256: "sha256:1",
		Status: sandbox.StatusError, ExitCode: 3, Stdout: "o", Stderr: "e", StdoutTruncated: true, StderrTruncated: true,
		Result: json.RawMessage(`{"a":1}`), GuestError: &supervisor.GuestError{Type: "T", Message: "m", Traceback: "tb"},
		Receipts:  []broker.Receipt{{ReceiptID: "sha256:2", CallID: "c", ApprovalRequestID: "a", Capability: "cap", Outcome: "ok", ErrorCode: "x"}},
		Workspace: &sandbox.WorkspaceReceipt{Disposition: "exported", ErrorCode: "y", EntryCount: 2, Bytes: 9},
		ErrorCode: "z", Error: "err", Choices: []supervisor.Selected{{Name: "approve", Value: "deny", Source: "default"}},
		Idempotency: &supervisor.Idempotency{Key: "k", Attempt: 2, Replayed: true},
		Timings:     supervisor.Timings{TotalMs: 1.5}, Usage: sandbox.Usage{PeakMemoryBytes: 1, CPUTimeNs: 2}}
	var zero func(v reflect.Value, path string)
	zero = func(v reflect.Value, path string) {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() {
				t.Errorf("%s: nil", path)
				return
			}
			zero(v.Elem(), path)
		case reflect.Slice:
			if v.Len() == 0 {
				t.Errorf("%s: empty", path)
			}
			for i := 0; i < v.Len() && v.Type().Elem().Kind() == reflect.Struct; i++ {
				zero(v.Index(i), path+"[]")
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				zero(v.Field(i), path+"."+v.Type().Field(i).Name)
			}
		default:
			if v.IsZero() {
				t.Errorf("%s: zero", path)
			}
		}
	}
	zero(reflect.ValueOf(shownResult(t, res)), "report.Result")
}

// TestRunScriptKeepsItsArguments: after SCRIPT every argument is the
// script's, flags included; before it, `--` ends apysup's flags.
func TestRunScriptKeepsItsArguments(t *testing.T) {
	needNative(t)
	s := script(t, "import sys\nprint(sys.argv[1:])\n")
	for _, args := range [][]string{{s, "--json", "-x"}, {"--", s, "--json", "-x"}} {
		res, code, _ := runJSON(t, args...)
		if code != 0 || res.Stdout != "['--json', '-x']\n" {
			t.Fatalf("%v: exit %d, stdout %q", args, code, res.Stdout)
		}
	}
}

// TestRunCodeFromFlagOrStdin: run -c CODE and run - run code like python
// -c and python -: what follows is the code's argv, and the temporary
// file that holds the code is gone after the run; so is one that a killed
// run left (unlocked).
func TestRunCodeFromFlagOrStdin(t *testing.T) {
	needNative(t)
	stale, err := os.MkdirTemp("", codeDirPrefix)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(stale)
	if err := os.WriteFile(filepath.Join(stale, "-c"), []byte("print('left')\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	codeFiles := func() []string { m, _ := filepath.Glob(filepath.Join(os.TempDir(), "apysup-code-*")); return m }
	before := map[string]bool{}
	for _, d := range codeFiles() {
		before[d] = d != stale // the stale one goes (and any other left unlocked)
	}
	const code = "import sys\nprint(sys.argv)\n"
	res, exit, _ := runJSON(t, "-c", code, "a", "--json")
	if exit != 0 || res.Stdout != "['/run/apysup/job/-c', 'a', '--json']\n" {
		t.Fatalf("-c: exit %d, stdout %q", exit, res.Stdout)
	}
	var out, errOut strings.Builder
	app := newApp(&out, &errOut)
	app.Reader = strings.NewReader(code)
	if err := runApp(app, []string{"apysup", "run", "--json", "-", "b"}); err != nil {
		t.Fatalf("-: %v %s", err, errOut.String())
	}
	var fromStdin supervisor.Result
	if err := json.Unmarshal([]byte(out.String()), &fromStdin); err != nil || fromStdin.Stdout != "['/run/apysup/job/-', 'b']\n" {
		t.Fatalf("-: %v %q", err, fromStdin.Stdout)
	}
	for _, d := range codeFiles() {
		if !before[d] {
			t.Errorf("left: %s", d)
		}
	}
}

// TestGuestSeesAgentRuntimeCapabilityError: the exception a refused call
// raises is agent_runtime.CapabilityError by type(e), in a traceback and
// in the result's guest_error (the parity corpus runs it on wazero too).
func TestGuestSeesAgentRuntimeCapabilityError(t *testing.T) {
	needNative(t)
	s := script(t, `
import agent_runtime
try:
    agent_runtime._capability_call("x.y", {})
except agent_runtime.CapabilityError as e:
    print(type(e).__module__, type(e).__qualname__, repr(type(e)))
agent_runtime._capability_call("x.y", {})
`)
	res, _, _ := runJSON(t, s)
	if res.Stdout != "agent_runtime CapabilityError <class 'agent_runtime.CapabilityError'>\n" || res.GuestError == nil ||
		res.GuestError.Type != "agent_runtime.CapabilityError" || !strings.Contains(res.GuestError.Traceback, "\nagent_runtime.CapabilityError: unknown_capability") {
		t.Fatalf("stdout %q, guest error %+v", res.Stdout, res.GuestError)
	}
}

// TestRunReadsBackChoices: the surface is a choice, not a limit; --cpus is
// a limit (TestCPUsLimit in sandbox/native checks the cgroup's quota);
// --config FILE applies; a refusal's reason is said without Go package names.
func TestRunReadsBackChoices(t *testing.T) {
	needNative(t)
	res, code, _ := runJSON(t, "--cpus", "0.5", "../../examples/hello.py")
	if code != 1 || choice(t, res, "surface") != [2]string{"programmatic", SourceDefault} {
		t.Fatalf("exit %d, choices %+v", code, res.Choices)
	}
	limits := map[string][2]string{}
	for _, l := range res.Limits {
		limits[l.Name] = [2]string{l.Value, l.Source}
	}
	if _, ok := limits["surface"]; ok || limits["cpus"] != [2]string{"0.5", SourceFlag} {
		t.Fatalf("limits %+v", res.Limits)
	}
	// --config FILE on run: its settings apply, and the result says which file.
	cfg := filepath.Join(t.TempDir(), "apysup.json")
	os.WriteFile(cfg, []byte(`{"cpus": "0.25", "surface": "both"}`), 0o644)
	res, _, _ = runJSON(t, "--config", cfg, script(t, "pass\n"))
	limits = map[string][2]string{}
	for _, l := range res.Limits {
		limits[l.Name] = [2]string{l.Value, l.Source}
	}
	if res.Status != "ok" || limits["cpus"] != [2]string{"0.25", SourceConfig} || choice(t, res, "surface") != [2]string{"both", SourceConfig} ||
		choice(t, res, "config_file") != [2]string{cfg, SourceFlag} {
		t.Fatalf("--config: %s, limits %+v, choices %+v", res.Status, res.Limits, res.Choices)
	}
	s := filepath.Join(t.TempDir(), ".hidden.py")
	os.WriteFile(s, []byte("print(1)\n"), 0o644)
	out, _, code := run(t, "run", s)
	if code != ExitRefused || !strings.Contains(out, "reason    refused (invalid_job)") || strings.Contains(out, "native:") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}
