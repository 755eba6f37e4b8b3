package serve

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/broker/handlers"
	"github.com/apysup/apysup/internal/journal"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/supervisor"
	"github.com/apysup/apysup/plan"
)

// Config builds a Server. The zero value is usable.
type Config struct {
	StateDir string // the supervisor's state directory; default os.TempDir()
	// Pool keeps that many native sandboxes started for runs with the
	// default limits (supervisor.Config.NativePool).
	Pool int
	// WazeroPool keeps that many wazero children loaded for runs on
	// wazero (supervisor.Config.WazeroPool); New loads the interpreter.
	WazeroPool int
	// MaxConcurrent runs at once (default GOMAXPROCS) and Queue more that
	// wait (default 4*MaxConcurrent); beyond them, 429.
	MaxConcurrent int
	Queue         int
	// AllowHandlers are the handler kinds a posted manifest may name
	// (default builtin only: exec runs host commands, http reaches the
	// host's network, kv writes host files, each as the server).
	AllowHandlers []string
	MaxPlans      int // sealed Plans cached (default 64)
	MaxFinished   int // finished runs kept for GET (default 256)
	// MaxFinishedBytes bounds what they keep: their output, exported
	// files and event history (default 64 MiB); the oldest go first.
	MaxFinishedBytes int
	// RetryAfter is the Retry-After of a 429 (default 1s).
	RetryAfter time.Duration
	// Journal, when set, lets runs name an idempotency_key.
	Journal *journal.Journal
}

func (c Config) withDefaults() Config {
	if c.MaxConcurrent <= 0 {
		c.MaxConcurrent = runtime.GOMAXPROCS(0)
	}
	if c.Queue < 0 {
		c.Queue = 0
	} else if c.Queue == 0 {
		c.Queue = 4 * c.MaxConcurrent
	}
	// builtin always: the others are allowed besides it (docs/api.md).
	if !slices.Contains(c.AllowHandlers, handlers.KindBuiltin) {
		c.AllowHandlers = append([]string{handlers.KindBuiltin}, c.AllowHandlers...)
	}
	if c.MaxPlans <= 0 {
		c.MaxPlans = 64
	}
	if c.MaxFinished <= 0 {
		c.MaxFinished = 256
	}
	if c.MaxFinishedBytes <= 0 {
		c.MaxFinishedBytes = 64 << 20
	}
	if c.RetryAfter <= 0 {
		c.RetryAfter = time.Second
	}
	if c.StateDir == "" {
		c.StateDir = os.TempDir()
	}
	return c
}

// Server is the run service: admission, runs, Plans, approvals and
// metrics in front of one Supervisor. Serve it with Handler (or Serve);
// Shutdown drains it.
type Server struct {
	cfg     Config
	sup     *supervisor.Supervisor
	plans   *planCache
	empty   *sealedPlan // the empty Plan, as `apysup run` without --plan
	metrics *metrics
	slots   chan struct{} // one per running run

	base   context.Context // cancelled when the grace period ends
	cancel context.CancelFunc

	mu       sync.Mutex
	draining bool
	live     map[string]*run // admitted, not finished
	finished map[string]*run
	order    []string // finished, oldest first
	kept     int      // bytes the finished runs keep (runBytes)
	runs     sync.WaitGroup
}

// New builds the Supervisor, sweeps what a killed predecessor left in the
// state directory and starts the pool, before anything is admitted.
func New(cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	// The pool's limits are a request's without limits (RunLimits.sandbox).
	sup := supervisor.New(supervisor.Config{StateDir: cfg.StateDir, NativePool: cfg.Pool, NativePoolLimits: sandbox.DefaultLimits(),
		WazeroPool: cfg.WazeroPool})
	if err := sup.Prepare(); err != nil && cfg.Pool > 0 {
		// Without a pool a native failure is each run's typed refusal
		// (and /v1/health's); a pool that cannot start is the operator's.
		sup.Close()
		return nil, err
	}
	if cfg.WazeroPool > 0 {
		if err := sup.PrepareWazero(context.Background()); err != nil {
			sup.Close()
			return nil, err
		}
	}
	r, _ := plan.NewRegistry(16)
	p, err := r.Seal()
	if err != nil {
		sup.Close()
		return nil, err
	}
	base, cancel := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, sup: sup, plans: newPlanCache(cfg.MaxPlans, cfg.AllowHandlers),
		empty: &sealedPlan{plan: p, handlers: broker.NewHandlers(), closer: io.NopCloser(nil), refs: 1},
		slots: make(chan struct{}, cfg.MaxConcurrent), base: base, cancel: cancel,
		live: map[string]*run{}, finished: map[string]*run{}}
	s.metrics = newMetrics(s)
	return s, nil
}

// Shutdown stops admitting runs, lets those admitted finish until ctx
// ends, then cancels the rest, waits for them and closes the Supervisor
// (its pool and backends).
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.draining = true
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.runs.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		s.cancel()
		<-done
	}
	s.cancel()
	s.plans.close()
	return s.sup.Close()
}

// run is one admitted run.
type run struct {
	id        string
	ctx       context.Context
	cancel    context.CancelFunc
	approvals *broker.Approvals
	events    *runEvents
	ledger    ledgerEvents
	done      chan struct{}

	mu     sync.Mutex
	state  string
	result *RunResult
}

func (r *run) snapshot() RunState {
	r.mu.Lock()
	defer r.mu.Unlock()
	return RunState{RunID: r.id, State: r.state, Result: r.result}
}

func (r *run) setState(state string) {
	r.mu.Lock()
	r.state = state
	r.mu.Unlock()
}

// admit registers a run, or refuses it: draining, or max-concurrent runs
// plus a full queue. A synchronous run ends with its client (parent).
func (s *Server) admit(parent context.Context, key string) (*run, *Error) {
	id, err := supervisor.NewRunID()
	if err != nil {
		return nil, refusal(CodeInternal, "no run id")
	}
	if key != "" { // every attempt under a key is one run, with one id
		id = supervisor.KeyedRunID(key)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case key != "" && s.cfg.Journal == nil:
		return nil, refusal(journal.CodeUnavailable, "this server keeps no journal (apysup serve --journal DIR)")
	case key != "" && s.live[id] != nil:
		return nil, refusal(journal.CodeRunActive, "a run under this idempotency key is running")
	case s.draining:
		return nil, refusal(CodeShuttingDown, "the server is shutting down")
	case len(s.live) >= s.cfg.MaxConcurrent+s.cfg.Queue:
		return nil, refusal(CodeOverloaded, "%d runs are running or queued", len(s.live))
	}
	ctx, cancel := context.WithCancel(s.base)
	if parent != nil {
		stop, inner := context.AfterFunc(parent, cancel), cancel
		cancel = func() { stop(); inner() }
	}
	r := &run{id: id, ctx: ctx, cancel: cancel, approvals: broker.NewApprovals(broker.ApprovalOptions{}),
		events: newRunEvents(), done: make(chan struct{}), state: StateQueued}
	s.live[id] = r
	s.runs.Add(1)
	return r, nil
}

// lookup finds a live or finished run.
func (s *Server) lookup(id string) *run {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.live[id]; r != nil {
		return r
	}
	return s.finished[id]
}

// liveRuns are the runs admitted and not finished.
func (s *Server) liveRuns() []*run {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*run, 0, len(s.live))
	for _, r := range s.live {
		out = append(out, r)
	}
	return out
}

// counts are the runs running and those queued.
func (s *Server) counts() (running, queued int) {
	running = len(s.slots)
	s.mu.Lock()
	n := len(s.live)
	s.mu.Unlock()
	return running, max(n-running, 0)
}

// execute runs an admitted run to its result: it waits for a slot,
// materializes the workspace, runs, and publishes the result.
func (s *Server) execute(r *run, v *validRun, sp *sealedPlan) {
	defer s.runs.Done()
	var dir *sandbox.LockedDir
	defer func() {
		// The run's directory is removed off the waiting request's path:
		// removed here, before this goroutine ended, its system calls
		// held the request's goroutine back from writing the result
		// (0.6-0.9 ms a run, STARTUP.md). The goroutine that removes it
		// starts first, so that closing done makes the request's the
		// next to run here.
		if dir != nil {
			s.runs.Add(1)
			go func() {
				defer s.runs.Done()
				dir.Remove()
			}()
		}
		close(r.done)
	}()
	defer r.cancel()
	defer s.plans.release(sp)
	began := time.Now()
	var res *RunResult
	res, dir = s.runQueued(r, v, sp)
	s.metrics.observe(res, time.Since(began))
	r.mu.Lock()
	r.state, r.result = StateFinished, res
	r.mu.Unlock()
	r.ledger.finish(r.events, res.Events)
	r.events.publish(EventResult, res)
	s.keepFinished(r)
}

// keepFinished moves r from the live runs to the finished ones, and lets
// the oldest finished runs go while they are more than MaxFinished or keep
// more than MaxFinishedBytes (the newest is always kept).
func (s *Server) keepFinished(r *run) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.live, r.id)
	s.finished[r.id] = r
	s.order = append(s.order, r.id)
	s.kept += runBytes(r)
	for len(s.order) > s.cfg.MaxFinished || s.kept > s.cfg.MaxFinishedBytes && len(s.order) > 1 {
		s.kept -= runBytes(s.finished[s.order[0]])
		delete(s.finished, s.order[0])
		s.order = slices.Delete(s.order, 0, 1)
	}
}

// runBytes is about what a finished run keeps in memory: its output,
// exported files and event history.
func runBytes(r *run) int {
	n := r.events.historyBytes()
	if res := r.result; res != nil {
		n += len(res.Stdout) + len(res.Stderr)
		for name, b := range res.Exported {
			n += len(name) + len(b)
		}
	}
	return n
}

// runQueued waits for a slot, then runs the request through the
// supervisor. It returns the run's own directory (its seed and export),
// if it made one, for the caller to remove once the result is out.
func (s *Server) runQueued(r *run, v *validRun, sp *sealedPlan) (*RunResult, *sandbox.LockedDir) {
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-r.ctx.Done():
		return cancelledResult(r.id, v, sp), nil
	}
	r.setState(StateRunning)
	r.events.publish(EventState, map[string]string{"state": StateRunning})
	stopApprover := s.startApprover(r, v.Approve)
	defer stopApprover()

	// The script goes to the supervisor from memory, under the client's
	// name; a directory of the run's own is made only for a seed or an
	// export (writing the script there was 0.4-0.6 ms of a pooled run).
	req := supervisor.Request{
		Plan: sp.plan, Handlers: sp.handlers, Approvals: r.approvals, Surface: v.surface, Parent: v.Parent,
		RunID: r.id, Backend: v.Backend, BackendSource: "request", ScriptPath: v.ScriptName, Source: []byte(v.Source),
		Args: v.Args, Limits: v.limits, LimitSources: limitSources(v), Choices: choices(v),
		IdempotencyKey: v.IdempotencyKey, Journal: s.journalFor(v),
		Observers: []broker.Observer{broker.ObserverFunc(func(e broker.Event) error {
			r.ledger.observe(r.events, e)
			return nil
		})},
	}
	if req.Backend == "" {
		req.Backend, req.BackendSource = supervisor.BackendNative, "default"
	}
	output := &outputEvents{events: r.events}
	req.Output = output.publish
	defer output.flush()
	var dir *sandbox.LockedDir
	if v.seed != nil || v.Export {
		var err error
		dir, err = sandbox.NewLockedDir(s.cfg.StateDir, "apysup-"+r.id+"-api-") // swept as the run's own directories are
		if err != nil {
			return setupFailed(r.id, v, sp, err), nil
		}
	}
	if v.seed != nil {
		req.WorkspaceSeed = filepath.Join(dir.Path, "seed")
		if err := v.seed.write(req.WorkspaceSeed); err != nil {
			return setupFailed(r.id, v, sp, err), dir
		}
	}
	if v.Export {
		req.ExportDir = filepath.Join(dir.Path, "export")
	}
	res, err := s.sup.Run(r.ctx, req)
	if err != nil {
		return setupFailed(r.id, v, sp, err), dir
	}
	out := &RunResult{SchemaVersion: RunResultSchema, Result: *res}
	if res.Workspace != nil && res.Workspace.Disposition == "exported" {
		out.Exported, err = readExport(req.ExportDir, v.limits)
		if err != nil {
			out.Workspace.ErrorCode = supervisor.CodeExportFailed
		}
	}
	return out, dir
}

// startApprover decides the run's approval requests as its mode says
// (api: the API's clients decide) and streams every change; the returned
// func stops it.
func (s *Server) startApprover(r *run, mode string) func() {
	events, unsubscribe := r.approvals.Subscribe()
	ctx, cancel := context.WithCancel(r.ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer unsubscribe()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-events:
				if !ok {
					return
				}
				r.events.publish(EventApproval, ev.Record)
				if mode == ApproveAPI {
					continue
				}
				// Pending is the truth: a subscriber may miss events.
				for _, p := range r.approvals.Pending() {
					if mode == ApproveAuto {
						_ = r.approvals.Approve(p.ID)
					} else {
						_ = r.approvals.Reject(p.ID)
					}
				}
			}
		}
	})
	return func() { cancel(); wg.Wait() }
}

// pendingApprovals are the waiting requests of every live run, oldest
// first.
func (s *Server) pendingApprovals() []broker.PendingRequest {
	out := []broker.PendingRequest{}
	for _, r := range s.liveRuns() {
		out = append(out, r.approvals.Pending()...)
	}
	slices.SortFunc(out, func(a, b broker.PendingRequest) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out
}

// decide approves or rejects a waiting request of a live run.
func (s *Server) decide(id string, approve bool) (Decision, *Error) {
	for _, r := range s.liveRuns() {
		if _, ok := r.approvals.Get(id); !ok {
			continue
		}
		decide := r.approvals.Reject
		if approve {
			decide = r.approvals.Approve
		}
		switch err := decide(id); {
		case errors.Is(err, broker.ErrApprovalDecided):
			return Decision{}, refusal(CodeApprovalDecided, "the request was decided already")
		case err != nil:
			return Decision{}, refusal(CodeApprovalNotFound, "no such waiting request")
		}
		rec, _ := r.approvals.Get(id)
		return Decision{ID: id, State: string(rec.State)}, nil
	}
	// A run that finished while the decision was on its way: its request
	// was decided (approved, rejected, expired or cancelled at the run's
	// end), and the answer says so whichever side of the run's end it
	// arrived, never that the request does not exist.
	if r := s.finishedWith(id); r != nil {
		return Decision{}, refusal(CodeApprovalDecided, "the request was decided already")
	}
	return Decision{}, refusal(CodeApprovalNotFound, "no such waiting request")
}

// finishedWith is the finished run, still kept, that holds approval
// request id.
func (s *Server) finishedWith(id string) *run {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.finished {
		if r.approvals == nil {
			continue
		}
		if _, ok := r.approvals.Get(id); ok {
			return r
		}
	}
	return nil
}

func limitSources(v *validRun) []supervisor.Selected {
	l := v.Limits
	pick := func(name string, set bool, value string) supervisor.Selected {
		src := "default"
		if set {
			src = "request"
		}
		return supervisor.Selected{Name: name, Value: value, Source: src}
	}
	return []supervisor.Selected{
		pick("timeout", l.TimeoutMs != 0, v.limits.Timeout.String()),
		pick("memory", l.MemoryBytes != 0, strconv.FormatInt(v.limits.MemoryBytes, 10)),
		pick("pids", l.Pids != 0, strconv.FormatInt(v.limits.Pids, 10)),
		pick("cpus", l.CPUs != 0, strconv.FormatFloat(v.limits.CPUs, 'g', -1, 64)),
	}
}

func choices(v *validRun) []supervisor.Selected {
	src := func(set bool) string {
		if set {
			return "request"
		}
		return "default"
	}
	approve := v.Approve
	if approve == "" {
		approve = ApproveDeny
	}
	return []supervisor.Selected{
		{Name: "surface", Value: string(v.surface), Source: src(v.Surface != "")},
		{Name: "approve", Value: approve, Source: src(v.Approve != "")},
		{Name: "workspace", Value: workspaceSelected(v.seed), Source: src(v.seed != nil)},
		{Name: "export", Value: strconv.FormatBool(v.Export), Source: src(v.Export)},
	}
}

// failedResult is the result of a run that never reached the supervisor.
func failedResult(id string, v *validRun, sp *sealedPlan, status sandbox.Status, code, msg string) *RunResult {
	backend, source := v.Backend, "request"
	if backend == "" {
		backend, source = supervisor.BackendNative, "default"
	}
	return &RunResult{SchemaVersion: RunResultSchema, Result: supervisor.Result{
		RunID: id, Backend: backend, BackendSource: source, PlanSHA256: sp.plan.Identity(),
		Status: status, ErrorCode: code, Error: msg, ExitCode: -1,
		Receipts: []broker.Receipt{}, Events: []broker.Event{},
		Limits: limitSources(v), Choices: choices(v),
	}}
}

func cancelledResult(id string, v *validRun, sp *sealedPlan) *RunResult {
	return failedResult(id, v, sp, sandbox.StatusKilled, sandbox.CodeCanceled, "cancelled while queued")
}

func setupFailed(id string, v *validRun, sp *sealedPlan, err error) *RunResult {
	var we *sandbox.WorkspaceError
	if errors.As(err, &we) {
		return failedResult(id, v, sp, sandbox.StatusRefused, we.Code, "the workspace was refused")
	}
	return failedResult(id, v, sp, sandbox.StatusSetupFailed, sandbox.CodeSetupFailed, "the run's files could not be written")
}

// outputEvents publishes the guest's output as stdout and stderr events,
// each chunk cut at a UTF-8 character's end (the rest waits for the next
// chunk), so that JSON strings carry whole characters.
type outputEvents struct {
	events *runEvents
	held   [2][]byte // stdout, stderr
}

func (o *outputEvents) publish(stream string, chunk []byte) {
	i := 0
	if stream == sandbox.Stderr {
		i = 1
	}
	text := append(o.held[i], chunk...)
	cut := len(text)
	for back := 1; back <= 3 && back <= len(text); back++ {
		if b := text[len(text)-back]; b >= 0xC0 { // the start of a sequence: is it whole?
			if !utf8.FullRune(text[len(text)-back:]) {
				cut = len(text) - back
			}
			break
		} else if b < 0x80 {
			break
		}
	}
	o.held[i] = append([]byte(nil), text[cut:]...)
	if cut > 0 {
		o.events.publish(stream, map[string]string{"data": string(text[:cut])})
	}
}

// flush publishes what is held back (a run that ended mid-character).
func (o *outputEvents) flush() {
	for i, stream := range []string{sandbox.Stdout, sandbox.Stderr} {
		if len(o.held[i]) > 0 {
			o.events.publish(stream, map[string]string{"data": string(o.held[i])})
		}
	}
}

// journalFor is the journal of a run under a key, nil otherwise.
func (s *Server) journalFor(v *validRun) *journal.Journal {
	if v.IdempotencyKey == "" {
		return nil
	}
	return s.cfg.Journal
}

// ledgerEvents publishes a run's ledger events in order: from the Broker's
// observer as they are appended and, just before the result, those the
// observer has not delivered yet from the run's own ledger. An observer
// delivers from a queue of its own and the run may end first (run_ended,
// the last event, then reached a stream after its result, which ends it);
// every stream now carries the ledger, then the result.
type ledgerEvents struct {
	mu       sync.Mutex
	next     int // the seq after the last one published
	finished bool
}

func (l *ledgerEvents) observe(events *runEvents, e broker.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.finished || e.Seq < l.next {
		return
	}
	events.publish(EventLedger, e)
	l.next = e.Seq + 1
}

// finish publishes the events of all that the observer has not, and stops
// the observer. An event the observer missed (its queue was full) stays
// missed, as RunResult.events_missed says.
func (l *ledgerEvents) finish(events *runEvents, all []broker.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range all {
		if e.Seq >= l.next {
			events.publish(EventLedger, e)
			l.next = e.Seq + 1
		}
	}
	l.finished = true
}
