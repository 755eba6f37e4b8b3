package apysup

import (
	"context"
	"errors"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/supervisor"
	"github.com/apysup/apysup/plan"
)

// Backends.
const (
	BackendNative = supervisor.BackendNative // confined CPython under libcontainer (Linux, root)
	BackendWazero = supervisor.BackendWazero // CPython for WASI in wazero (`make wasi-python`)
)

// Limits bound one run; a zero field takes its default
// (sandbox.DefaultLimits).
type Limits = sandbox.Limits

// Result is one run's RunResult (SPEC.md section 10): Status, ExitCode,
// Stdout, Stderr, Receipts, the hash-chained Events and the rest, as
// `apysup run --json` prints it.
type Result = supervisor.Result

// Request is one run. The zero value with only Source set runs that script
// on the native backend with the default limits under the empty Plan: it
// computes and calls nothing.
type Request struct {
	// The script: its text (Source) or a file on the host (ScriptPath),
	// exactly one of them.
	Source     []byte
	ScriptPath string
	Args       []string

	// Plan is the sealed Plan the run binds; nil is the empty Plan.
	// Handlers serve its capabilities; nil is none. Approvals decides the
	// calls that need a person; nil denies them.
	Plan      *plan.Plan
	Handlers  *broker.Handlers
	Approvals *broker.Approvals
	// Surface presents the Plan to the guest (default programmatic, with
	// Parent, default "main", as the parent call id).
	Surface plan.Surface
	Parent  string

	Backend string // BackendNative (default) or BackendWazero
	Limits  Limits

	Workspace string // a host directory copied into /workspace; optional
	Export    string // publish the final workspace here after an ok run; optional

	// Output, when set, receives the guest's output while it runs: stream
	// is "stdout" or "stderr", chunk the next bytes of it (keep it, do not
	// change it). Calls come one at a time, in order within each stream,
	// and add up to exactly the Result's Stdout and Stderr (bounded as
	// they are). The guest never waits for Output; Run returns after its
	// last call.
	Output func(stream string, chunk []byte)
}

// Run runs one request on a Supervisor of its own and closes it. A program
// that runs many scripts keeps a Supervisor instead.
func Run(ctx context.Context, req Request) (Result, error) {
	s := New(Config{})
	res, err := s.Run(ctx, req)
	if cerr := s.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return res, err
}

// Config builds a Supervisor. The zero value is usable.
type Config struct {
	// StateDir holds the per-run directories; default os.TempDir().
	StateDir string
	// NativePool keeps that many native sandboxes started ahead of their
	// runs, interpreter included, for runs whose limits are
	// NativePoolLimits: such a run skips the sandbox's start and the
	// interpreter's. Each sandbox serves one run. Zero starts each sandbox
	// for its run.
	NativePool       int
	NativePoolLimits Limits
	// WazeroPool keeps that many wazero child processes loaded ahead of
	// their runs (Linux), their interpreters started and waiting for a
	// job: such a run skips the child's start, its load of the compiled
	// interpreter and CPython's start. Each child serves one run. Zero starts
	// each child for its run.
	WazeroPool int
}

// Supervisor runs scripts and keeps what is worth keeping between runs:
// the backends and the pool. It is safe for concurrent runs; Close it
// after the last.
type Supervisor struct {
	s *supervisor.Supervisor
}

// New returns a Supervisor. Backends are built on their first run.
func New(cfg Config) *Supervisor {
	return &Supervisor{s: supervisor.New(supervisor.Config{StateDir: cfg.StateDir,
		NativePool: cfg.NativePool, NativePoolLimits: cfg.NativePoolLimits, WazeroPool: cfg.WazeroPool})}
}

// Close waits for what past runs left to remove, then releases the
// backends and the pool.
func (s *Supervisor) Close() error {
	return s.s.Close()
}

// Run runs one request. The error is non-nil only when the request itself
// is unusable; every guest ending, refusal and setup failure is a Result
// with its Status and ErrorCode.
func (s *Supervisor) Run(ctx context.Context, req Request) (Result, error) {
	if (len(req.Source) == 0) == (req.ScriptPath == "") {
		return Result{}, errors.New("apysup: exactly one of Source and ScriptPath is required")
	}
	script := req.ScriptPath
	if script == "" {
		script = "main.py" // the guest's name for Source: /run/apysup/job/main.py
	}
	p, hs := req.Plan, req.Handlers
	if p == nil {
		r, err := plan.NewRegistry(16) // as `apysup run` without --plan: the same Plan identity
		if err != nil {
			return Result{}, err
		}
		if p, err = r.Seal(); err != nil {
			return Result{}, err
		}
	}
	if hs == nil {
		hs = broker.NewHandlers()
	}
	surface, parent := req.Surface, req.Parent
	if surface == "" {
		surface = plan.SurfaceProgrammatic
	}
	if parent == "" && surface != plan.SurfaceDirect {
		parent = "main"
	}
	backend, source := req.Backend, sourceRequest
	if backend == "" {
		backend, source = BackendNative, sourceDefault
	}
	res, err := s.s.Run(ctx, supervisor.Request{
		Plan: p, Handlers: hs, Approvals: req.Approvals, Surface: surface, Parent: parent,
		Backend: backend, BackendSource: source,
		ScriptPath: script, Source: req.Source, Args: req.Args, WorkspaceSeed: req.Workspace, ExportDir: req.Export,
		Limits: req.Limits, Output: req.Output,
	})
	if err != nil {
		return Result{}, err
	}
	return *res, nil
}

// Where a choice came from: the library's counterpart of the CLI's flag
// and default (SPEC.md section 10).
const (
	sourceRequest = "request"
	sourceDefault = "default"
)
