package supervisor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/internal/journal"
	"github.com/apysup/apysup/internal/rpc"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/native"
	"github.com/apysup/apysup/internal/sandbox/wazero"
	"github.com/apysup/apysup/plan"
	"github.com/apysup/apysup/python"
)

// Backend names.
const (
	BackendNative = "native"
	BackendWazero = "wazero"
)

// Codes the supervisor adds to those of the backends.
const (
	CodeUnknownBackend  = "unknown_backend"
	CodeInvalidRequest  = "invalid_request"
	CodeGuestHostField  = broker.CodeGuestHostField
	CodeOutcomeInvalid  = "guest_outcome_invalid"
	CodeReceiptsInvalid = "receipts_invalid"
	CodeExportFailed    = "workspace_export_failed"
	CodeSnapshotFailed  = "workspace_snapshot_failed"
)

// Config builds a Supervisor. The zero value is usable.
type Config struct {
	StateDir   string // where per-run directories go; default os.TempDir()
	GuestFiles fs.FS  // default python.GuestFiles
	Wazero     wazero.Config
	// Progress, when set, receives one line for anything slow (a wazero
	// compile, only when the compilation cache does not hold it).
	Progress func(string)
	// NativePool, when positive, keeps that many native sandboxes started
	// ahead of their runs (native.Pool), interpreter included, per limits
	// class: worth it for a long-lived Supervisor that runs many scripts;
	// a one-shot run gains nothing from it. NativePoolLimits is the class
	// started at once. NativePoolClasses bounds how many classes exist at
	// once (0: one, NativePoolLimits'); runs with other limits get a class
	// on demand while there is room. NativePoolIdle (0: 5 minutes) is how
	// long a started sandbox waits before it is destroyed, and how long a
	// class is kept filled after its last run (then dropped).
	NativePool        int
	NativePoolLimits  sandbox.Limits
	NativePoolClasses int
	NativePoolIdle    time.Duration
	// WazeroPool, when positive, keeps that many wazero child processes
	// loaded ahead of their runs (wazero.Config.Pool; Linux): worth it
	// for a long-lived Supervisor that runs many scripts on wazero. Each
	// child serves one run. It overrides Wazero.Pool.
	WazeroPool int
}

// Supervisor runs scripts. Backends are built on first use and reused.
type Supervisor struct {
	cfg       Config
	channels  *rpc.Registry
	sweepOnce sync.Once // run directories of dead supervisors are removed once
	runs      runsRoot  // where this Supervisor's runs make their directories

	native nativeState // the backend and its pool, built on first use (Linux)
	after  background  // the teardowns of runs whose results were returned

	wazeroMu sync.Mutex
	wazero   *wazero.Interpreter
}

// New returns a Supervisor.
func New(cfg Config) *Supervisor {
	if cfg.StateDir == "" {
		cfg.StateDir = os.TempDir()
	}
	if cfg.GuestFiles == nil {
		cfg.GuestFiles = python.GuestFiles
	}
	if cfg.Wazero.GuestFiles == nil {
		cfg.Wazero.GuestFiles = cfg.GuestFiles
	}
	if cfg.Wazero.Progress == nil {
		cfg.Wazero.Progress = cfg.Progress
	}
	return &Supervisor{cfg: cfg, channels: rpc.NewRegistry(rpc.RegistryConfig{})}
}

// Close waits for the teardowns of past runs, then releases the backends.
// Runs must have ended.
func (s *Supervisor) Close() error {
	var errs []error
	errs = append(errs, s.after.wait(), s.native.close())
	if s.wazero != nil {
		errs = append(errs, s.wazero.Close(context.Background()))
	}
	errs = append(errs, s.runs.close())
	return errors.Join(errs...)
}

// Request is one run.
type Request struct {
	Plan      *plan.Plan
	Handlers  *broker.Handlers
	Approvals *broker.Approvals // nil: calls that need approval are denied
	Observers []broker.Observer
	Surface   plan.Surface
	Parent    string
	// RunID names the run; empty is a fresh one. A caller that must name
	// the run before it starts (a service's run handle) sets it: it must
	// match broker's run id pattern and be unique.
	RunID string

	Backend       string // native or wazero
	BackendSource string // flag, env, config or default

	// ScriptPath is the script's file on the host, or with Source only its
	// name (the base name is the guest's file name).
	ScriptPath    string
	Source        []byte // the script's text, when the caller holds it; nil: read ScriptPath
	Args          []string
	WorkspaceSeed string // a host directory copied into the workspace; optional
	ExportDir     string // publish the final workspace here (if the run is ok); optional
	Limits        sandbox.Limits
	LimitSources  []Selected
	// Choices are the caller's other choices, read back in the Result
	// with where each came from (the CLI: approval mode, config file,
	// workspace, export).
	Choices []Selected
	// IdempotencyKey, with Journal, makes the run durable and retriable
	// (internal/journal): a key whose run completed returns its recorded
	// result without running anything; one whose run did not complete
	// runs again, and each call meets its record from the earlier attempt.
	IdempotencyKey string
	Journal        *journal.Journal
	// Output, when set, receives the guest's stdout and stderr as they
	// are written (sandbox.Output); the Result holds them whole either way.
	Output sandbox.Output
}

// Run runs one script and returns its RunResult. The error is non-nil only
// when the request itself is unusable; every guest ending, refusal and
// setup failure is a Result with its status and error code.
//
// The run's sandbox, channel, workspace and run directory are torn down
// after the result is returned, in the background; Close waits for that
// and reports what failed.
func (s *Supervisor) Run(ctx context.Context, req Request) (*Result, error) {
	began := time.Now()
	var undo teardown
	defer func() { s.after.undo(undo) }() // last: after the result is complete
	if req.Plan == nil || req.Handlers == nil || req.ScriptPath == "" {
		return nil, errors.New("supervisor: Plan, Handlers and ScriptPath are required")
	}
	if (req.IdempotencyKey == "") != (req.Journal == nil) {
		return nil, errors.New("supervisor: an idempotency key needs a journal, and a journal a key")
	}
	runID := req.RunID
	if runID == "" {
		var err error
		if runID, err = NewRunID(); err != nil {
			return nil, err
		}
	}
	if req.IdempotencyKey != "" {
		runID = KeyedRunID(req.IdempotencyKey)
	}
	res := &Result{RunID: runID, Backend: req.Backend, BackendSource: req.BackendSource, PlanSHA256: req.Plan.Identity(),
		Receipts: []broker.Receipt{}, Limits: req.LimitSources, Choices: req.Choices, ExitCode: -1}
	defer func() { res.Timings.TotalMs = ms(time.Since(began)) }()
	var callJournal broker.CallJournal // set once an attempt under a key has begun
	defer func() {
		if callJournal != nil {
			res.Timings.TotalMs = ms(time.Since(began))
			endKeyed(req, res) // after the ledger is closed (deferred below)
		}
	}()
	ledger := broker.NewLedger(req.Observers...)
	defer closeLedger(res, ledger) // last: after the workspace and the Broker
	refuse := func(status sandbox.Status, code string, err error) (*Result, error) {
		res.Status, res.ErrorCode = status, code
		if err != nil {
			res.Error = err.Error()
		}
		return res, nil
	}

	if req.IdempotencyKey != "" {
		recorded, cj, code, err := beginKeyed(ctx, req, res)
		switch {
		case code != "":
			return refuse(sandbox.StatusRefused, code, err)
		case recorded != nil:
			return recorded, nil
		}
		callJournal = cj
	}
	if req.Backend != BackendNative && req.Backend != BackendWazero {
		return refuse(sandbox.StatusRefused, CodeUnknownBackend, fmt.Errorf("backend %q: want native or wazero", req.Backend))
	}
	limits, err := req.Limits.WithDefaults()
	if err != nil {
		return refuse(sandbox.StatusRefused, sandbox.CodeInvalidLimits, err)
	}
	req.Limits = limits // the backends see the limits the result reports
	pres, err := req.Plan.Present(req.Surface, req.Parent)
	if err != nil {
		return refuse(sandbox.StatusRefused, plan.CodeOf(err), err)
	}
	b, err := broker.New(broker.Config{Plan: req.Plan, RunID: runID, Surface: req.Surface, Parent: req.Parent,
		Handlers: req.Handlers, Approvals: req.Approvals, Ledger: ledger, Journal: callJournal})
	if code := plan.CodeOf(err); code == broker.CodeAcceptanceUnsupported {
		return refuse(sandbox.StatusRefused, code, err) // a strict capability whose live provider misses a guarantee
	} else if err != nil {
		return refuse(sandbox.StatusRefused, CodeInvalidRequest, err)
	}
	ledger.Append(broker.EventRunAdmitted, admittedBody(res, req))
	defer b.Close()

	s.sweep()
	runDir, err := s.runs.newRunDir(s.cfg.StateDir)
	if err != nil {
		return refuse(sandbox.StatusSetupFailed, native.CodeSetupFailed, err)
	}
	undo.add(func() error { return os.RemoveAll(runDir) })
	workspace := filepath.Join(runDir, workspaceName)
	unmount, err := mountWorkspace(workspace, limits)
	if err != nil {
		return refuse(sandbox.StatusSetupFailed, native.CodeSetupFailed, err)
	}
	undo.add(unmount)
	if req.WorkspaceSeed != "" {
		if err := sandbox.CopyTree(req.WorkspaceSeed, workspace); errors.Is(err, syscall.ENOSPC) {
			return refuse(sandbox.StatusRefused, sandbox.CodeWorkspaceTooLarge, err)
		} else if err != nil {
			return refuse(sandbox.StatusRefused, sandbox.CodeWorkspaceInputInvalid, err)
		}
	}
	initial, err := sandbox.SnapshotWithin(workspace, limits.WorkspaceBytes, int(limits.WorkspaceFiles))
	if err != nil {
		return refuse(sandbox.StatusRefused, codeOfWorkspace(err, sandbox.CodeWorkspaceInputInvalid), err)
	}
	job := sandbox.Job{ScriptPath: req.ScriptPath, Source: req.Source, Args: req.Args, Prelude: pres.Prelude, WorkspaceDir: workspace, Output: req.Output}

	var out *sandbox.Outcome
	if req.Backend == BackendNative {
		out, err = s.runNative(ctx, b, runID, req, job, runDir, &undo)
	} else {
		out, err = s.runWazero(ctx, b, job, runDir, req.Limits, &undo)
	}
	b.Close()
	if out == nil {
		return refuse(sandbox.StatusSetupFailed, native.CodeSetupFailed, err)
	}
	s.fill(res, out, err)
	if rs := b.Receipts(); rs != nil {
		res.Receipts = rs
	}
	if verr := broker.VerifyReceipts(res.PlanSHA256, runID, broker.MarshalReceipts(res.Receipts)); verr != nil {
		res.Status, res.ErrorCode, res.Error = sandbox.StatusError, CodeReceiptsInvalid, verr.Error()
	}
	if res.Status != sandbox.StatusRefused && res.Status != sandbox.StatusSetupFailed {
		res.Workspace = s.disposeWorkspace(res, req, limits, initial, workspace)
		ledger.Append(broker.EventWorkspace, map[string]string{"receipt_id": res.Workspace.ReceiptID,
			"disposition": res.Workspace.Disposition, "error_code": res.Workspace.ErrorCode})
	}
	return res, nil
}

// admittedBody is the run_admitted event: the Plan and every choice with
// where it came from.
func admittedBody(res *Result, req Request) map[string]string {
	body := map[string]string{"run_id": res.RunID, "plan_sha256": res.PlanSHA256,
		"backend": res.Backend, "backend_source": res.BackendSource, "surface": string(req.Surface), "parent_call_id": req.Parent}
	for _, group := range []struct {
		prefix string
		sel    []Selected
	}{{"limit.", res.Limits}, {"choice.", res.Choices}} {
		for _, s := range group.sel {
			body[group.prefix+s.Name] = s.Value
			body[group.prefix+s.Name+".source"] = s.Source
		}
	}
	return body
}

// closeLedger ends the run's ledger with its status and puts it in the
// result.
func closeLedger(res *Result, ledger *broker.Ledger) {
	ledger.Append(broker.EventRunEnded, map[string]string{"status": string(res.Status), "error_code": res.ErrorCode,
		"exit_code": strconv.Itoa(res.ExitCode), "receipts": strconv.Itoa(len(res.Receipts))})
	ledger.Close()
	res.Events, res.EventsHead, res.EventsMissed = ledger.Events(), ledger.Head(), ledger.Missed()
}

// WazeroPoolState reports the wazero pool; before the interpreter has
// loaded (the first wazero run, or PrepareWazero) only its size.
func (s *Supervisor) WazeroPoolState() WazeroPoolState {
	s.wazeroMu.Lock()
	in := s.wazero
	s.wazeroMu.Unlock()
	st := WazeroPoolState{Size: s.cfg.WazeroPool}
	if in != nil {
		p := in.PoolState()
		st = WazeroPoolState{Size: p.Size, Ready: p.Ready, Loaded: p.Loaded, Taken: p.Taken,
			Cold: p.Cold, Discarded: p.Discarded, Expired: p.Expired}
	}
	return st
}

func (s *Supervisor) wazeroInterpreter(ctx context.Context) (*wazero.Interpreter, error) {
	s.wazeroMu.Lock()
	defer s.wazeroMu.Unlock()
	if s.wazero != nil {
		return s.wazero, nil
	}
	// A failure is not remembered: a build made meanwhile (make wasi-python)
	// is found by the next run of a long-lived supervisor. Load locates the
	// build first and refuses a missing one as Locate does.
	cfg := s.cfg.Wazero
	if s.cfg.WazeroPool > 0 {
		cfg.Pool = s.cfg.WazeroPool
	}
	in, err := wazero.Load(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s.wazero = in
	return in, nil
}

// runWazero runs the job on the wazero backend. The backend makes the
// guest's scratch directories (out, tmp) in runDir, so that a supervisor
// that dies mid-run leaves nothing the next one's sweep of run directories
// does not remove; they are unmounted and removed with the run's other
// teardown, after the result.
func (s *Supervisor) runWazero(ctx context.Context, b *broker.Broker, job sandbox.Job, runDir string, limits sandbox.Limits, undo *teardown) (*sandbox.Outcome, error) {
	job.RunDir = runDir
	in, err := s.wazeroInterpreter(ctx)
	if err != nil {
		var ue *wazero.UnavailableError
		if errors.As(err, &ue) {
			return failedOutcome(sandbox.StatusRefused, ue.Code), err
		}
		return failedOutcome(sandbox.StatusSetupFailed, native.CodeSetupFailed), err
	}
	out, remove, err := in.Backend(rpc.Responder(b)).RunLeavingScratch(ctx, job, limits)
	undo.add(func() error { remove(); return nil }) // after the result, before the run directory's removal
	return out, err
}

// fill copies the backend's outcome into the result and reads the guest's
// own report, refusing host fields it may have forged.
func (s *Supervisor) fill(res *Result, out *sandbox.Outcome, err error) {
	res.Status, res.ErrorCode, res.ExitCode = out.Status, out.ErrorCode, out.ExitCode
	if err != nil {
		// A host-side failure after the guest ended (cleanup_failed) keeps
		// the guest's status but is never reported as a clean run.
		res.Error = err.Error()
		var ne *native.Error
		if res.ErrorCode == "" && errors.As(err, &ne) {
			res.ErrorCode = ne.Code
		}
	}
	res.Stdout, res.Stderr = string(out.Stdout), string(out.Stderr)
	res.StdoutTruncated, res.StderrTruncated = out.StdoutTruncated, out.StderrTruncated
	res.Usage = out.Usage
	res.Timings = Timings{PrepareMs: ms(out.Timings.Prepare), StartMs: ms(out.Timings.Start), RunMs: ms(out.Timings.Run), DestroyMs: ms(out.Timings.Destroy)}
	if len(out.GuestOutcome) == 0 {
		return
	}
	g, perr := sandbox.ParseOutcome(out.GuestOutcome)
	if perr != nil {
		if res.Status == sandbox.StatusOK {
			res.Status, res.ErrorCode, res.Error = sandbox.StatusError, CodeOutcomeInvalid, perr.Error()
		}
		return
	}
	if g.Error != nil {
		res.GuestError = &GuestError{Type: g.Error.Type, Message: g.Error.Message, Traceback: g.Error.Traceback}
	}
	if g.ResultSet {
		if cerr := broker.CheckGuestOutput(g.Result); cerr != nil {
			res.Status, res.ErrorCode, res.Error = sandbox.StatusError, CodeGuestHostField, cerr.Error()
			return
		}
		if canon, cerr := canonjson.Canonical(g.Result); cerr == nil {
			res.Result = canon
		}
	}
}

// disposeWorkspace snapshots the final tree and exports it (only after an
// ok run, when asked) or discards it, and returns the workspace receipt.
func (s *Supervisor) disposeWorkspace(res *Result, req Request, limits sandbox.Limits, initial sandbox.Tree, dir string) *sandbox.WorkspaceReceipt {
	w := &sandbox.WorkspaceReceipt{RunID: res.RunID, PlanSHA256: res.PlanSHA256, InitialTreeSHA256: initial.Digest(),
		Policy: "discard", Disposition: "discarded"}
	w.RequestSHA256, _ = canonjson.DigestOf(canonjson.DomainWorkspaceRequest, map[string]any{
		"run_id": res.RunID, "script": filepath.Base(req.ScriptPath), "args": append([]string{}, req.Args...),
		"export": req.ExportDir != "",
	})
	final, err := sandbox.SnapshotWithin(dir, limits.WorkspaceBytes, int(limits.WorkspaceFiles))
	if err != nil {
		w.ErrorCode = codeOfWorkspace(err, CodeSnapshotFailed)
		w.Seal()
		return w
	}
	w.FinalTreeSHA256, w.EntryCount, w.Bytes = final.Digest(), len(final.Entries), final.Bytes
	if req.ExportDir != "" {
		w.Policy = "export"
		switch {
		case res.Status != sandbox.StatusOK:
			w.ErrorCode = "run_not_ok"
		default:
			if err := sandbox.Export(dir, req.ExportDir, final); err != nil {
				w.ErrorCode = codeOfWorkspace(err, CodeExportFailed)
			} else {
				w.Disposition = "exported"
			}
		}
	}
	w.Seal()
	return w
}

func codeOfWorkspace(err error, fallback string) string {
	var we *sandbox.WorkspaceError
	if errors.As(err, &we) {
		return we.Code
	}
	return fallback
}

// outcomeOf turns a backend error into an Outcome with its typed code.
func outcomeOf(err error) *sandbox.Outcome {
	var ne *native.Error
	if errors.As(err, &ne) {
		return failedOutcome(ne.Status, ne.Code)
	}
	return failedOutcome(sandbox.StatusSetupFailed, native.CodeSetupFailed)
}

func failedOutcome(status sandbox.Status, code string) *sandbox.Outcome {
	return &sandbox.Outcome{Status: status, ErrorCode: code, ExitCode: -1}
}

// NewRunID returns a fresh run id, as Run makes one.
func NewRunID() (string, error) { return newID("run-") }

// Prepare does now what the first run would: it sweeps what supervisors
// that died left in the state directory (run directories; the native
// backend's processes, cgroups and uid leases) and builds the native
// backend and its pool. A long-lived service calls it before it admits
// runs.
func (s *Supervisor) Prepare() error {
	s.sweep()
	return s.prepareNative()
}

// PrepareWazero loads the wazero interpreter now, as the first wazero run
// would, and so starts its pool (WazeroPool): a long-lived service calls
// it before it admits runs.
func (s *Supervisor) PrepareWazero(ctx context.Context) error {
	_, err := s.wazeroInterpreter(ctx)
	return err
}

// sweep removes, once, what dead supervisors left: the native sandboxes
// first (killing their guests), since their mounts keep those supervisors'
// run directories busy, then the run directories.
func (s *Supervisor) sweep() {
	s.sweepOnce.Do(func() {
		s.sweepNative()
		_ = sweepRunDirs(s.cfg.StateDir)
	})
}

func newID(prefix string) (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return prefix + hex.EncodeToString(b[:]), nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
