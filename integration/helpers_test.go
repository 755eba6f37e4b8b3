package integration

import (
	"bufio"
	"context"
	"encoding/json"
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
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/doctor"
	"github.com/apysup/apysup/internal/sandbox/native"
	_ "github.com/apysup/apysup/internal/sandbox/native/mainthread" // the main goroutine keeps the main thread (see the package)
	"github.com/apysup/apysup/internal/sandbox/supervisor"
	"github.com/apysup/apysup/internal/testenv"
	"github.com/apysup/apysup/plan"
)

// hostEnvName is set in this process before any run; no guest may see it.
const hostEnvName = "APYSUP_ESCAPE_HOST_ENV"

var hostEnvValue = "host-only-" + strconv.Itoa(os.Getpid())

func TestMain(m *testing.M) {
	native.MaybeInit()
	if state := os.Getenv(sweepChildEnv); state != "" {
		os.Exit(pooledChild(state)) // TestKilledPoolIsSwept's child; it is killed
	}
	os.Setenv(hostEnvName, hostEnvValue)
	before := snapshotHost()
	code := m.Run()
	if problems := finishSuite(before); len(problems) > 0 {
		fmt.Fprintln(os.Stderr, "integration: left behind after the suite:")
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, "  -", p)
		}
		code = 1
	}
	os.Exit(code)
}

// The one Supervisor of the test binary. Its StateDir is private (and
// short: socket paths must fit sun_path), so that the final check can
// demand it be empty while other test binaries run on the same host.
var suite struct {
	once     sync.Once
	sup      *supervisor.Supervisor
	stateDir string
	err      error
	report   doctor.Report

	mu       sync.Mutex
	runIDs   []string
	statuses map[sandbox.Status]int
}

// need stops the test unless the native backend can run here: a skip
// locally, a failure under APYSUP_REQUIRE_ALL=1 (and a skip with -short).
func need(t *testing.T) *supervisor.Supervisor {
	t.Helper()
	if testing.Short() {
		t.Skip("integration: real guests are not run with -short (make unit)")
	}
	testenv.NeedRoot(t)
	suite.once.Do(func() {
		suite.report = doctor.Run(context.Background())
		if suite.report.FirstFailure() != nil {
			return
		}
		suite.stateDir, suite.err = os.MkdirTemp("", "apysup-i")
		if suite.err == nil {
			// Each run's container root (an unprivileged host uid) must
			// traverse it to reach the skeleton root, as it does /tmp.
			suite.err = os.Chmod(suite.stateDir, 0o711)
		}
		if suite.err == nil {
			suite.sup = supervisor.New(suiteConfig())
		}
	})
	if f := suite.report.FirstFailure(); f != nil {
		testenv.Need(t, false, "native backend: "+f.Name+": "+f.Status+": "+f.Detail+" (fix: "+f.Fix+")")
	}
	if suite.err != nil {
		t.Fatal(suite.err)
	}
	return suite.sup
}

// poolEnv, set to N, runs the suite through a pooled Supervisor (N
// sandboxes per limits class, up to poolClasses classes, made on demand):
// the escape suite against runs whose interpreter was started ahead
// (make test-pooled; make test runs a representative part of it).
const (
	poolEnv     = "APYSUP_TEST_POOL"
	poolClasses = 8
)

func poolSize() int {
	n, _ := strconv.Atoi(os.Getenv(poolEnv))
	return max(n, 0)
}

func suiteConfig() supervisor.Config {
	return supervisor.Config{StateDir: suite.stateDir, NativePool: poolSize(), NativePoolClasses: poolClasses}
}

// awaitPool waits (a few seconds at most: this is no assertion) until
// every class of a pooled supervisor is full, so that a run of a class
// seen before takes a sandbox started ahead.
func awaitPool(sup *supervisor.Supervisor) {
	if poolSize() == 0 {
		return
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if st := sup.PoolState(); st.Size == 0 || st.Ready >= st.Classes*poolSize() {
			return
		}
	}
}

// emptyPlan is the Plan of every escape run: no capability at all.
func emptyPlan(t *testing.T) (*plan.Plan, *broker.Handlers) {
	t.Helper()
	r, err := plan.NewRegistry(16)
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Seal()
	if err != nil {
		t.Fatal(err)
	}
	return p, broker.NewHandlers()
}

// guestScript writes testdata/escape/_probe.py followed by the named guest
// (a file under testdata/escape, or inline source when name ends in
// "\n") into a fresh file and returns its path.
func guestScript(t *testing.T, name string) string {
	t.Helper()
	common, err := os.ReadFile(filepath.Join("testdata", "escape", "_probe.py"))
	if err != nil {
		t.Fatal(err)
	}
	body, base := []byte(name), "inline.py"
	if !strings.HasSuffix(name, "\n") {
		base = name
		if body, err = os.ReadFile(filepath.Join("testdata", "escape", name)); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(t.TempDir(), base)
	if err := os.WriteFile(p, append(append(common, '\n'), body...), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// run runs req on the native backend with the empty Plan unless req says
// otherwise, and remembers the run id for the final leftover check.
func run(t *testing.T, req supervisor.Request) *supervisor.Result {
	t.Helper()
	sup := need(t)
	return runWith(t, sup, req)
}

func runWith(t *testing.T, sup *supervisor.Supervisor, req supervisor.Request) *supervisor.Result {
	t.Helper()
	return runCtx(context.Background(), t, sup, req)
}

func runCtx(ctx context.Context, t *testing.T, sup *supervisor.Supervisor, req supervisor.Request) *supervisor.Result {
	t.Helper()
	res, err := tryRun(ctx, sup, completeRequest(t, req))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if os.Getenv("APYSUP_SHOW_GUEST") == "1" {
		t.Logf("%s: %s", filepath.Base(req.ScriptPath), summary(res))
	}
	return res
}

// completeRequest fills in the suite's defaults: the empty Plan, the
// programmatic surface with parent "main", the native backend.
func completeRequest(t *testing.T, req supervisor.Request) supervisor.Request {
	t.Helper()
	if req.Plan == nil {
		req.Plan, req.Handlers = emptyPlan(t)
	}
	if req.Surface == "" {
		req.Surface, req.Parent = plan.SurfaceProgrammatic, "main"
	}
	if req.Backend == "" {
		req.Backend, req.BackendSource = supervisor.BackendNative, "default"
	}
	return req
}

// tryRun runs a complete request and records it for the final check; it
// never stops the test, so goroutines may call it.
func tryRun(ctx context.Context, sup *supervisor.Supervisor, req supervisor.Request) (*supervisor.Result, error) {
	awaitPool(sup)
	res, err := sup.Run(ctx, req)
	if err != nil {
		return nil, err
	}
	suite.mu.Lock()
	defer suite.mu.Unlock()
	suite.runIDs = append(suite.runIDs, res.RunID)
	if suite.statuses == nil {
		suite.statuses = map[sandbox.Status]int{}
	}
	suite.statuses[res.Status]++
	return res, nil
}

// runGuest runs a guest of testdata/escape with the empty Plan.
func runGuest(t *testing.T, name string, limits sandbox.Limits, args ...string) *supervisor.Result {
	t.Helper()
	return run(t, supervisor.Request{ScriptPath: guestScript(t, name), Args: args, Limits: limits})
}

// summary is a Result without its (possibly huge) output, for failures.
func summary(r *supervisor.Result) string {
	return fmt.Sprintf("status %s code %q exit %d error %q stdout(%d) %q stderr(%d) %q", r.Status, r.ErrorCode, r.ExitCode,
		r.Error, len(r.Stdout), clip(r.Stdout, 4000), len(r.Stderr), clip(r.Stderr, 4000))
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// markers are the lines a guest printed with _probe.py's helpers.
type markers struct {
	blocked map[string]string // name -> errno name or exception type
	escaped map[string]string // name -> what the attempt got
	allowed map[string]bool
	failed  map[string]string // controls that did not work
	info    map[string]json.RawMessage
}

func parseMarkers(t *testing.T, res *supervisor.Result) markers {
	t.Helper()
	m := markers{blocked: map[string]string{}, escaped: map[string]string{}, allowed: map[string]bool{},
		failed: map[string]string{}, info: map[string]json.RawMessage{}}
	sc := bufio.NewScanner(strings.NewReader(res.Stdout))
	sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
	for sc.Scan() {
		kind, rest, _ := strings.Cut(sc.Text(), " ")
		name, detail, _ := strings.Cut(rest, " ")
		var dup bool
		switch kind {
		case "BLOCKED":
			_, dup = m.blocked[name]
			m.blocked[name] = detail
		case "ESCAPED":
			_, dup = m.escaped[name]
			m.escaped[name] = detail
		case "ALLOWED":
			dup = m.allowed[name]
			m.allowed[name] = true
		case "FAILED":
			_, dup = m.failed[name]
			m.failed[name] = detail
		case "INFO":
			_, dup = m.info[name]
			m.info[name] = json.RawMessage(detail)
		default:
			continue
		}
		if dup {
			t.Errorf("marker %s %s printed twice", kind, name)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading the guest's markers: %v", err)
	}
	return m
}

// expect checks that the guest printed exactly: BLOCKED for every key of
// blocked (with one of the "|"-separated reasons, or any reason for ""),
// ALLOWED for every control, and nothing else: no ESCAPED, no FAILED, no
// BLOCKED the test did not ask for.
func (m markers) expect(t *testing.T, blocked map[string]string, controls ...string) {
	t.Helper()
	for name, got := range m.escaped {
		t.Errorf("ESCAPED %s: %s", name, got)
	}
	for name, got := range m.failed {
		t.Errorf("control %s failed: %s", name, got)
	}
	for _, name := range sortedKeys(blocked) {
		got, ok := m.blocked[name]
		_, escaped := m.escaped[name]
		switch {
		case escaped:
		case !ok:
			t.Errorf("attempt %s: no marker (the probe did not run)", name)
		case blocked[name] != "" && !slices.Contains(strings.Split(blocked[name], "|"), got):
			t.Errorf("attempt %s: blocked with %s, want %s", name, got, blocked[name])
		}
	}
	for _, name := range sortedKeys(m.blocked) {
		if _, ok := blocked[name]; !ok {
			t.Errorf("unexpected attempt %s (blocked with %s): the test and the guest disagree", name, m.blocked[name])
		}
	}
	for _, name := range controls {
		if !m.allowed[name] {
			t.Errorf("control %s: no ALLOWED marker", name)
		}
	}
	for name := range m.allowed {
		if !slices.Contains(controls, name) {
			t.Errorf("unexpected control %s", name)
		}
	}
}

// infoAs decodes INFO key into v.
func (m markers) infoAs(t *testing.T, key string, v any) {
	t.Helper()
	raw, ok := m.info[key]
	if !ok {
		t.Fatalf("no INFO %s from the guest", key)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("INFO %s %s: %v", key, raw, err)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// procStat is one line of /proc/<pid>/stat, cut where comm ends.
type procStat struct {
	pid, ppid int
	state     string
}

// processes lists every process of the host (of this pid namespace).
func processes() map[int]procStat {
	out := map[int]procStat{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(b[i+1:]))
		if len(fields) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		out[pid] = procStat{pid: pid, ppid: ppid, state: fields[0]}
	}
	return out
}

// descendants lists the processes below this test process: every guest
// process is one while its run lasts (the pid namespace's init is a child
// of this process, and nothing in a pid namespace is reparented out of it).
func descendants() []int {
	procs := processes()
	self := os.Getpid()
	var out []int
	for pid := range procs {
		for p, hops := procs[pid].ppid, 0; p > 1 && hops < 4096; p, hops = procs[p].ppid, hops+1 {
			if p == self {
				out = append(out, pid)
				break
			}
		}
	}
	sort.Ints(out)
	return out
}

// guestHostPids finds the host pids of the guests whose script arguments
// hold token (the tests pass a unique token as a script argument). The
// native runner reads them from the job directory (--argv), which the host
// sees through /proc/PID/root.
func guestHostPids(token string) []int {
	var out []int
	for _, pid := range descendants() {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "root", "run/apysup/job/.argv"))
		if err != nil {
			continue
		}
		if slices.Contains(strings.Split(string(b), "\x00"), token) {
			out = append(out, pid)
		}
	}
	return out
}

// vmHWM is this process's peak resident set size in bytes.
func vmHWM() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return -1
}

func itoa(n int) string { return strconv.Itoa(n) }
