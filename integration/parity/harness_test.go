package parity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/broker/handlers"
	"github.com/apysup/apysup/integration/internal/bothbackends"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/supervisor"
	"github.com/apysup/apysup/plan"
)

func TestMain(m *testing.M) { suite.Main(m) }

// The one Supervisor of the test binary (integration/internal/bothbackends),
// pooled on both backends when APYSUP_TEST_POOL says so (make test-pooled).
var suite = bothbackends.Suite{StatePrefix: "apysup-p", Pool: testPool()}

func testPool() int {
	n, _ := strconv.Atoi(os.Getenv("APYSUP_TEST_POOL"))
	return max(n, 0)
}

// need returns the suite's Supervisor, or stops the test when either
// backend cannot run here: a skip locally, a failure under
// APYSUP_REQUIRE_ALL=1 (and a skip with -short). Parity needs both
// backends; neither is optional.
func need(t testing.TB) *supervisor.Supervisor {
	t.Helper()
	return suite.Need(t)
}

// manifest is the Plan of every corpus run: max_calls, then the grant
// policies of echo.say and notes.put. Each capability has a handler of its
// own identity, so that dispatch counts are per capability.
const manifest = `{"schema_version": "apysup.manifest.v1", "max_calls": %d,
 "capabilities": [
  {"name": "echo.say", "version": "1", "description": "Echo the arguments.", "effect": "read", "playback": "live",
   "handler": {"kind": "builtin", "id": "echo", "version": "1", "config": {}},
   "input_schema": {"type": "object", "properties": {"text": {"type": "string", "maxLength": 200}, "n": {"type": "integer"}},
                    "required": ["text"], "additionalProperties": false},
   "output_schema": {"type": "object"},
   "python": {"module": "echo", "function": "say", "aliases": ["shout"], "globals": ["echo_say"]}},
  {"name": "notes.put", "version": "1", "description": "Store a note (approval).", "effect": "write", "playback": "live",
   "handler": {"kind": "parity", "id": "notes", "version": "1"},
   "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"], "additionalProperties": false},
   "python": {"module": "notes", "function": "put"}, "approval": {"lease_seconds": 300}},
  {"name": "files.remove", "version": "1", "description": "Remove a file (approval; always rejected).", "effect": "write", "playback": "live",
   "handler": {"kind": "parity", "id": "remove", "version": "1"},
   "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "additionalProperties": false},
   "python": {"module": "files", "function": "remove"}, "approval": {"lease_seconds": 300}},
  {"name": "fail.always", "version": "1", "description": "A handler that fails.", "effect": "read", "playback": "live",
   "handler": {"kind": "parity", "id": "fail", "version": "1"},
   "input_schema": {"type": "object"},
   "python": {"module": "fail", "function": "always"}},
  {"name": "shape.bad", "version": "1", "description": "A handler whose result breaks the output schema.", "effect": "read", "playback": "live",
   "handler": {"kind": "parity", "id": "badshape", "version": "1"},
   "input_schema": {"type": "object"},
   "output_schema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
   "python": {"module": "shape", "function": "bad"}}
 ],
 "grants": [{"capability": "echo.say", "policy": %s}, {"capability": "notes.put", "policy": %s},
            {"capability": "files.remove", "policy": {}}, {"capability": "fail.always", "policy": {}},
            {"capability": "shape.bad", "policy": {}}]}`

// Plans by name: "main" grants 64 calls, "budget" 3, "bench" 256 (as many
// as a run may have receipts), all with grants that restrict nothing;
// "grants" restricts echo.say to two texts and three calls, and notes.put
// to short notes, once.
var plans = sync.OnceValues(func() (map[string]*plan.Plan, error) {
	out := map[string]*plan.Plan{}
	type planOf struct {
		maxCalls          int
		echoSay, notesPut string
	}
	for name, p := range map[string]planOf{
		"main": {64, `{}`, `{}`}, "budget": {3, `{}`, `{}`}, "bench": {broker.MaxReceipts, `{}`, `{}`},
		"grants": {64, `{"arguments": {"properties": {"text": {"enum": ["Paris", "Oslo"]}}}, "max_calls": 3}`,
			`{"arguments": {"properties": {"text": {"maxLength": 16}}}, "max_calls": 1}`},
	} {
		m, err := plan.ParseManifest([]byte(fmt.Sprintf(manifest, p.maxCalls, p.echoSay, p.notesPut)))
		if err != nil {
			return nil, err
		}
		if out[name], err = m.Seal(parityHandlers{}); err != nil {
			return nil, err
		}
	}
	return out, nil
})

// parityHandlers is the harness's plan.HandlerChecker, as a host with
// handlers of its own writes one: its kind, parity, with the ids it
// builds; every other capability as apysup's handlers check it.
type parityHandlers struct{}

func (parityHandlers) CheckHandlers(m *plan.Manifest) error {
	rest := *m
	rest.Capabilities = nil
	var problems plan.Problems
	for i, c := range m.Capabilities {
		switch id := c.Spec.Handler; {
		case id.Kind != "parity":
			rest.Capabilities = append(rest.Capabilities, c)
		case id.ID != "notes" && id.ID != "remove" && id.ID != "fail" && id.ID != "badshape":
			problems = append(problems, &plan.Error{Code: handlers.CodeUnknownHandler, Path: fmt.Sprintf("capabilities[%d].handler.id", i), Message: "unknown parity handler"})
		}
	}
	if err := (handlers.Checker{}).CheckHandlers(&rest); err != nil {
		return err // only builtins remain, at their indices in rest
	}
	if len(problems) > 0 {
		return problems
	}
	return nil
}

func planNamed(t testing.TB, name string) *plan.Plan {
	t.Helper()
	ps, err := plans()
	if err != nil {
		t.Fatal(err)
	}
	p, ok := ps[name]
	if !ok {
		t.Fatalf("no plan %q", name)
	}
	return p
}

// counter counts the dispatches of one run, per capability.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) wrap(capability string, h broker.Handler) broker.Handler {
	return broker.HandlerFunc(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		c.mu.Lock()
		c.n[capability]++
		c.mu.Unlock()
		return h.Call(ctx, args)
	})
}

// String is "capability=n ..." sorted, or "none".
func (c *counter) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.n) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(c.n))
	for k := range c.n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%d", k, c.n[k])
	}
	return b.String()
}

// handlersFor builds a fresh handler table for one run of p: every handler
// wrapped by the run's counter.
func handlersFor(t testing.TB, p *plan.Plan, c *counter) *broker.Handlers {
	t.Helper()
	impl := map[string]broker.Handler{
		"echo.say":     broker.Echo{},
		"notes.put":    broker.Echo{},
		"files.remove": broker.Echo{},
		"fail.always": broker.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return nil, errors.New("parity: this handler always fails")
		}),
		"shape.bad": broker.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"n":"not a number"}`), nil
		}),
	}
	hs := broker.NewHandlers()
	for _, capability := range p.Capabilities() {
		h, ok := impl[capability.Name()]
		if !ok {
			t.Fatalf("no handler for %s", capability.Name())
		}
		if err := hs.Add(capability.Handler(), c.wrap(capability.Name(), h)); err != nil {
			t.Fatal(err)
		}
	}
	return hs
}

// approver decides every waiting request of a by rule: files.remove is
// always rejected; anything else is approved unless its arguments contain
// "reject". It stops when stop is called.
func approver(a *broker.Approvals) (stop func()) {
	events, unsubscribe := a.Subscribe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range events {
			for _, p := range a.Pending() {
				if p.Capability == "files.remove" || strings.Contains(p.Preview, "reject") {
					_ = a.Reject(p.ID)
				} else {
					_ = a.Approve(p.ID)
				}
			}
		}
	}()
	return func() { unsubscribe(); <-done }
}

// corpusCase is one script of the corpus and how to run it.
type corpusCase struct {
	name    string       // the subtest's name; default the script's
	script  string       // file under corpus/
	plan    string       // "main" (default), "budget" or "grants"
	surface plan.Surface // default programmatic with parent "main"
	parent  string
	args    []string
	limits  sandbox.Limits // zero fields: a 3 minute timeout, the defaults otherwise
	// status and exit are what both backends must end with (default ok, 0):
	// parity alone would accept two identical failures.
	status sandbox.Status
	exit   int
	// stdout, when set, is what both backends must print: the script's
	// point is its output (which refusals, which messages).
	stdout string
	// known lists the documented differences: field -> the exact value
	// each backend gives (docs/parity.md says why).
	known map[string]pinned
}

type pinned struct{ native, wazero string }

// observation is what the suite compares of one run: run-specific ids are
// gone, everything else is kept verbatim.
type observation struct {
	fields map[string]string
	res    *supervisor.Result
	tree   map[string]sandbox.Entry // the exported workspace, when the run was ok
}

// fieldOrder is the order of fields in reports.
var fieldOrder = []string{"status", "exit_code", "error_code", "stdout", "stderr_last", "guest_error", "result", "workspace", "dispatches", "receipts"}

const corpusDir = "corpus"

// runBoth runs tc on both backends at once and observes the two runs.
// Everything that can stop the test happens on the test's goroutine.
func runBoth(ctx context.Context, t testing.TB, sup *supervisor.Supervisor, tc corpusCase) (native, wazero observation) {
	t.Helper()
	n := prepare(t, tc, supervisor.BackendNative)
	w := prepare(t, tc, supervisor.BackendWazero)
	var wg sync.WaitGroup
	for _, r := range []*pendingRun{n, w} {
		wg.Add(1)
		go func() { defer wg.Done(); r.run(ctx, sup) }()
	}
	wg.Wait()
	return n.observe(t), w.observe(t)
}

// runOne runs tc on one backend and observes it.
func runOne(ctx context.Context, t testing.TB, sup *supervisor.Supervisor, tc corpusCase, backend string) observation {
	t.Helper()
	r := prepare(t, tc, backend)
	r.run(ctx, sup)
	return r.observe(t)
}

// pendingRun is one run of a corpus case: its request, with a fresh
// counter, handler table and approval controller, and then its result.
type pendingRun struct {
	backend   string
	req       supervisor.Request
	counter   *counter
	approvals *broker.Approvals
	res       *supervisor.Result
	err       error
}

func prepare(t testing.TB, tc corpusCase, backend string) *pendingRun {
	t.Helper()
	p := planNamed(t, tc.planName())
	r := &pendingRun{backend: backend, counter: &counter{n: map[string]int{}},
		approvals: broker.NewApprovals(broker.ApprovalOptions{})}
	surface, parent := tc.surface, tc.parent
	if surface == "" {
		surface, parent = plan.SurfaceProgrammatic, "main"
	}
	r.req = supervisor.Request{
		Plan: p, Handlers: handlersFor(t, p, r.counter), Approvals: r.approvals,
		Surface: surface, Parent: parent,
		Backend: backend, BackendSource: "flag",
		ScriptPath:    filepath.Join(corpusDir, tc.script),
		Args:          tc.args,
		WorkspaceSeed: filepath.Join(corpusDir, "workspace"),
		ExportDir:     filepath.Join(t.TempDir(), backend),
		Limits:        tc.runLimits(),
	}
	return r
}

// run runs the request with an approver deciding by the suite's rule. It
// may run on any goroutine: it never touches the test.
func (r *pendingRun) run(ctx context.Context, sup *supervisor.Supervisor) {
	stop := approver(r.approvals)
	defer stop()
	r.res, r.err = sup.Run(ctx, r.req)
}

// observe is the run's observation, with the exported workspace when the
// run was ok.
func (r *pendingRun) observe(t testing.TB) observation {
	t.Helper()
	if r.err != nil {
		t.Fatalf("%s: Run: %v", r.backend, r.err)
	}
	o := observe(r.res, r.counter)
	if w := r.res.Workspace; w != nil && w.Disposition == "exported" {
		tree, err := sandbox.Snapshot(r.req.ExportDir)
		if err != nil {
			t.Fatalf("%s: snapshot of the export: %v", r.backend, err)
		}
		o.tree = map[string]sandbox.Entry{}
		for _, e := range tree.Entries {
			o.tree[e.Path] = e
		}
	}
	return o
}

func (tc corpusCase) id() string {
	if tc.name != "" {
		return tc.name
	}
	return strings.TrimSuffix(tc.script, ".py")
}

func (tc corpusCase) runLimits() sandbox.Limits {
	l := tc.limits
	if l.Timeout == 0 {
		// Generous: the race detector slows the host several times over,
		// and a timeout here is a finding, not a measurement.
		l.Timeout = 3 * time.Minute
	}
	return l
}

func (tc corpusCase) planName() string {
	if tc.plan == "" {
		return "main"
	}
	return tc.plan
}

func observe(res *supervisor.Result, c *counter) observation {
	f := map[string]string{
		"status":      string(res.Status),
		"exit_code":   fmt.Sprint(res.ExitCode),
		"error_code":  res.ErrorCode,
		"stdout":      res.Stdout,
		"stderr_last": lastLine(res.Stderr),
		"result":      string(res.Result),
		"dispatches":  c.String(),
		"receipts":    normaliseReceipts(res.Receipts),
	}
	if g := res.GuestError; g != nil {
		f["guest_error"] = g.Type + ": " + g.Message
	}
	if w := res.Workspace; w != nil {
		f["workspace"] = fmt.Sprintf("%s entries=%d bytes=%d", w.FinalTreeSHA256, w.EntryCount, w.Bytes)
	}
	return observation{fields: f, res: res}
}

// normaliseReceipts keeps every field of every receipt but the run's own
// ids: receipt_id and run_id are dropped (the digest contains the run id),
// approval_request_id becomes "approval" (it is random).
func normaliseReceipts(rs []broker.Receipt) string {
	var b strings.Builder
	for _, r := range rs {
		approval := "-"
		if r.ApprovalRequestID != "" {
			approval = "approval"
		}
		fmt.Fprintf(&b, "#%d %s plan=%s %s parent=%s %s outcome=%s error=%s %s request=%s response=%s\n",
			r.OperationIndex, r.SchemaVersion, r.PlanSHA256, r.CallID, r.ParentCallID, r.Capability, r.Outcome, r.ErrorCode,
			approval, r.RequestSHA256, r.ResponseSHA256)
	}
	return b.String()
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// verdict is one script's line in the report.
type verdict struct {
	script     string
	matched    []string
	documented []string
	differ     []string
	problems   []string // what fails the test, one message each
}

// compare checks one script's two observations: equal fields match; a
// known field must hold exactly its pinned value on each side; anything
// else that differs is a problem, as is a result that binds another Plan
// than planID or ends otherwise than the case says.
func compare(tc corpusCase, planID string, n, w observation) verdict {
	v := verdict{script: tc.id()}
	fail := func(format string, args ...any) {
		v.problems = append(v.problems, tc.id()+": "+fmt.Sprintf(format, args...))
	}
	for name := range tc.known {
		if !slices.Contains(fieldOrder, name) {
			fail("documented difference in unknown field %q", name)
		}
	}
	for _, name := range fieldOrder {
		nv, wv := n.fields[name], w.fields[name]
		if pin, ok := tc.known[name]; ok {
			if nv != pin.native || wv != pin.wazero {
				fail("%s: the documented difference changed:\nnative  got %q\n        want %q\nwazero  got %q\n        want %q",
					name, nv, pin.native, wv, pin.wazero)
				v.differ = append(v.differ, name)
				continue
			}
			v.documented = append(v.documented, name)
			continue
		}
		if nv != wv {
			fail("%s differs (not a documented exception):\nnative %q\nwazero %q%s", name, nv, wv, treeDiff(name, n, w))
			v.differ = append(v.differ, name)
			continue
		}
		v.matched = append(v.matched, name)
	}
	for _, side := range []struct {
		backend string
		res     *supervisor.Result
	}{{"native", n.res}, {"wazero", w.res}} {
		if side.res.PlanSHA256 != planID {
			fail("%s: result binds plan %s, want %s", side.backend, side.res.PlanSHA256, planID)
		}
		// The status and exit code both backends must end with, where they
		// agree (a disagreement is reported above).
		if n.fields["status"] == w.fields["status"] && side.res.Status != tc.wantStatus() {
			fail("%s: status %s (%s), want %s\nstderr: %s", side.backend, side.res.Status, side.res.ErrorCode, tc.wantStatus(), clip(side.res.Stderr, 4000))
		}
		if n.fields["exit_code"] == w.fields["exit_code"] && side.res.ExitCode != tc.exit {
			fail("%s: exit code %d, want %d\nstderr: %s", side.backend, side.res.ExitCode, tc.exit, clip(side.res.Stderr, 4000))
		}
		if tc.stdout != "" && n.fields["stdout"] == w.fields["stdout"] && side.res.Stdout != tc.stdout {
			fail("%s: stdout\n%s\nwant\n%s", side.backend, side.res.Stdout, tc.stdout)
		}
	}
	return v
}

// pins are the lines to paste into the known map of corpus_test.go for
// every field that differs or is documented (APYSUP_PARITY_PIN=1).
func pins(tc corpusCase, n, w observation) []string {
	var out []string
	for _, name := range fieldOrder {
		nv, wv := n.fields[name], w.fields[name]
		if _, known := tc.known[name]; nv != wv || known {
			out = append(out, fmt.Sprintf("PIN %s %s: {native: %q, wazero: %q},", tc.id(), name, nv, wv))
		}
	}
	return out
}

func (tc corpusCase) wantStatus() sandbox.Status {
	if tc.status == "" {
		return sandbox.StatusOK
	}
	return tc.status
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// treeDiff says which workspace entries differ, from the two exports.
func treeDiff(field string, n, w observation) string {
	if field != "workspace" || n.tree == nil || w.tree == nil {
		return ""
	}
	paths := map[string]bool{}
	for p := range n.tree {
		paths[p] = true
	}
	for p := range w.tree {
		paths[p] = true
	}
	sorted := make([]string, 0, len(paths))
	for p := range paths {
		sorted = append(sorted, p)
	}
	sort.Strings(sorted)
	var b strings.Builder
	for _, p := range sorted {
		ne, nok := n.tree[p]
		we, wok := w.tree[p]
		if nok && wok && ne == we {
			continue
		}
		fmt.Fprintf(&b, "\n  %s: native %s, wazero %s", p, entryString(ne, nok), entryString(we, wok))
	}
	return b.String()
}

func entryString(e sandbox.Entry, ok bool) string {
	if !ok {
		return "absent"
	}
	return fmt.Sprintf("%s mode %#o size %d %s", e.Type, e.Mode, e.Size, e.SHA256)
}
