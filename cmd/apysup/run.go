package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/cmd/apysup/internal/report"
	"github.com/apysup/apysup/internal/journal"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/supervisor"
	"github.com/apysup/apysup/plan"
)

// Exit statuses of `apysup run` when the guest's own status does not apply,
// chosen to mean what they mean to timeout(1) and docker (RATIONALE.md,
// "Exit statuses").
const (
	ExitTimeout     = report.ExitTimeout
	ExitSetupFailed = report.ExitSetupFailed
	ExitRefused     = report.ExitRefused
	ExitKilled      = report.ExitKilled
	ExitMemoryLimit = report.ExitMemoryLimit
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run SCRIPT in a fresh sandbox under a sealed Plan",
		ArgsUsage: "SCRIPT [ARGS...] | -c CODE [ARGS...] | - [ARGS...]",
		Description: "Seals the manifest (or an empty Plan), starts the run's Broker, runs SCRIPT with Debian's\n" +
			"python3.11 under full confinement (native) or inside wazero, and prints a summary or, with\n" +
			"--json, the RunResult. Selection: flag > APYSUP_* environment > config file > default; the\n" +
			"result says where each value came from.\n\n" +
			"Without --json the script's stdout and stderr reach apysup's own line by line as it prints\n" +
			"them (escaped on a terminal; each capped at 1 MiB, as in the RunResult), and the summary\n" +
			"follows on stdout, with an uncaught exception's traceback unless stderr showed it. With\n" +
			"--json stdout holds the RunResult alone, and the script's output is only in it.\n\n" +
			"apysup's flags come before SCRIPT: everything after SCRIPT is the script's own argv\n" +
			"(`apysup run s.py --json` passes --json to s.py). `--` ends apysup's flags, for a SCRIPT\n" +
			"whose name begins with a dash. As with python, -c CODE runs CODE and - runs the code read\n" +
			"from standard input, and what follows is the code's argv; the code is written to a private\n" +
			"temporary file, removed after the run, which the guest sees as sys.argv[0] =\n" +
			"/run/apysup/job/-c (or /run/apysup/job/-), where CPython says -c (or -).\n\n" +
			"Exit status: the script's own for ok and error; 124 timeout, 125 setup_failed (apysup\n" +
			"itself failed), 126 refused (an unavailable feature, never a weaker fallback), 130 killed\n" +
			"(interrupted), 137 memory_limit, as timeout(1) and docker use them. Only the host decides\n" +
			"these: a script's own exit with one of them becomes 1 (--json keeps it).\n" +
			"2: a usage error (a bad flag, a SCRIPT that does not exist), before anything starts.\n" +
			"An --export the workspace refuses (links, special files, a name that is not UTF-8: the\n" +
			"guest's doing) leaves the run ok and the exit status the script's; the summary's workspace\n" +
			"line says \"discarded (CODE)\", and --json's workspace_receipt its disposition and\n" +
			"error_code: check them before reading DIR.\n" +
			"When the reader of apysup's stdout or stderr goes away (`apysup run s.py | head -1`), the\n" +
			"run is cancelled and torn down, and apysup then ends by SIGPIPE, as any writer does (141\n" +
			"in a shell).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "c", Usage: "run `CODE`, a program passed as a string (as python -c); what follows is its argv"},
			&cli.StringFlag{Name: "plan", Usage: "manifest `FILE`; without it an empty Plan (every call is denied)"},
			&cli.StringFlag{Name: "backend", Usage: "native or wazero (default native)"},
			&cli.StringFlag{Name: "surface", Usage: "direct, programmatic or both (default programmatic)"},
			&cli.StringFlag{Name: "parent", Value: "main", Usage: "the parent call id of programmatic calls"},
			&cli.StringFlag{Name: "timeout", Usage: "wall-clock limit, e.g. 30s (default 30s)"},
			&cli.StringFlag{Name: "memory", Usage: "memory limit, e.g. 256MiB (default 512MiB)"},
			&cli.StringFlag{Name: "pids", Usage: "process limit (native; default 128)"},
			&cli.StringFlag{Name: "cpus", Usage: "CPU quota in cores, e.g. 0.5 or 2 (native; default 1)"},
			configFlag,
			&cli.StringFlag{Name: "workspace", Usage: "copy `DIR` into the run's workspace (never mounted writable from the host)"},
			&cli.StringFlag{Name: "export", Usage: "publish the final workspace to `DIR` (must not exist) if the run is ok and the tree exportable (else the workspace receipt says why; the exit status stays the run's)"},
			&cli.StringFlag{Name: "approve", Usage: approveUsage},
			&cli.StringFlag{Name: "idempotency-key", Usage: "run under `KEY` with a journal in --state: a completed run's result is returned without running anything; an incomplete one runs again without dispatching any call twice"},
			stateFlag,
			&cli.BoolFlag{Name: "json", Usage: "print the RunResult as JSON"},
			serverFlag,
		},
		Action: runAction,
	}
}

func runAction(c *cli.Context) error {
	scriptPath, args, removeScript, err := scriptSource(c)
	if err != nil {
		return err
	}
	defer removeScript()
	sel, err := selectSettings(c)
	if err != nil {
		return err
	}
	if addr := c.String("server"); addr != "" {
		return runRemote(c, addr, scriptPath, args, sel)
	}
	surface, err := plan.ParseSurface(sel.values["surface"])
	if err != nil {
		return cli.Exit(err.Error(), 2)
	}
	parent := c.String("parent")
	if surface == plan.SurfaceDirect {
		parent = ""
	}
	p, hs, closeHandlers, err := loadPlan(c.String("plan"))
	if err != nil {
		return err
	}
	defer closeHandlers.Close()
	limits := sandbox.DefaultLimits()
	limits.Timeout, _ = parseDuration(sel.values["timeout"])
	limits.MemoryBytes, _ = parseBytes(sel.values["memory"])
	limits.Pids, _ = parsePositive(sel.values["pids"])
	limits.CPUs, _ = parseCPUs(sel.values["cpus"])

	key := c.String("idempotency-key")
	if (key == "") != (c.String("state") == "") {
		return cli.Exit("--idempotency-key and --state go together (see --help)", ExitUsage)
	}
	if key != "" && !journal.ValidKey(key) {
		return cli.Exit("--idempotency-key: 1-128 characters of [A-Za-z0-9._:-], starting with a letter or digit", ExitUsage)
	}
	var jn *journal.Journal
	if key != "" {
		// A journal that cannot be opened refuses the run before anything
		// starts (a full or read-only disk, a restored older copy).
		if jn, err = journal.Open(c.String("state"), journal.Options{Failpoint: failpoint}); err != nil {
			return refusedRun(c, key, err)
		}
		defer jn.Close()
	}

	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sawBrokenPipe.watch(cancel)
	outTerminal := report.IsTerminal(c.App.Writer)
	// Everything the run prints goes to stdout through here: the guest's
	// output, the summary, --json's RunResult.
	c.App.Writer = sawBrokenPipe.writer(c.App.Writer)
	// The guest's stderr, the approval prompt and progress notes share the
	// user's stderr.
	errOut := &lockedWriter{w: sawBrokenPipe.writer(c.App.ErrWriter)}
	approvals := broker.NewApprovals(broker.ApprovalOptions{})
	stopApprover, err := startApprover(ctx, c, sel.values["approve"], approvals, errOut)
	if err != nil {
		return cli.Exit(err.Error(), 2)
	}
	defer stopApprover()
	sup := supervisor.New(supervisor.Config{Progress: func(s string) { fmt.Fprintln(errOut, "apysup:", s) }})
	defer sup.Close()
	var sources []supervisor.Selected
	for _, name := range []string{"timeout", "memory", "pids", "cpus"} {
		sources = append(sources, sel.selected(name))
	}
	choices := []supervisor.Selected{
		sel.selected("surface"),
		sel.selected("approve"),
		{Name: "config_file", Value: sel.configFile, Source: sel.configSource},
		fromFlag(c, "workspace"),
		fromFlag(c, "export"),
	}
	// Without --json the guest's output reaches the user's as it is
	// written; with it, stdout is the RunResult alone.
	var streams *report.Streams
	var output sandbox.Output
	if !c.Bool("json") {
		streams = report.NewStreams(c.App.Writer, outTerminal, errOut, report.IsTerminal(c.App.ErrWriter))
		output = streams.Output
	}
	res, err := sup.Run(ctx, supervisor.Request{
		Plan: p, Handlers: hs, Approvals: approvals, Surface: surface, Parent: parent,
		Backend: sel.values["backend"], BackendSource: sel.sources["backend"],
		ScriptPath: scriptPath, Args: args,
		WorkspaceSeed: c.String("workspace"), ExportDir: c.String("export"),
		Limits: limits, LimitSources: sources, Choices: choices, Output: output,
		IdempotencyKey: key, Journal: jn,
	})
	if err != nil {
		return cli.Exit(err.Error(), ExitSetupFailed)
	}
	return reportRun(c, res, streams)
}

// refusedRun reports a run under an idempotency key whose journal could
// not be opened: refused before anything started, with the journal's code.
func refusedRun(c *cli.Context, key string, err error) error {
	res := &supervisor.Result{Status: sandbox.StatusRefused, ErrorCode: journal.CodeUnavailable, Error: err.Error(),
		ExitCode: -1, Receipts: []broker.Receipt{}, Events: []broker.Event{}, Idempotency: &supervisor.Idempotency{Key: key}}
	if code := plan.CodeOf(err); code != "" {
		res.ErrorCode = code
	}
	return reportRun(c, res, nil)
}

// reportRun prints the RunResult (summary or --json) and exits with its
// status. The summary reads the result as its JSON document, as the early
// client of run --server does (package report); --json has printed the
// document already, and its status needs two fields.
func reportRun(c *cli.Context, res *supervisor.Result, streams *report.Streams) error {
	if c.Bool("json") {
		if err := printJSON(c, "apysup.run_result.v1", res); err != nil {
			return err
		}
		if code := report.ExitStatus(&report.Result{Status: string(res.Status), ExitCode: res.ExitCode}); code != 0 {
			return cli.Exit("", code)
		}
		return nil
	}
	data, err := json.Marshal(res)
	if err != nil {
		return cli.Exit(err.Error(), ExitSetupFailed)
	}
	shown, err := report.FromJSON(data)
	if err != nil {
		return cli.Exit(err.Error(), ExitSetupFailed)
	}
	if streams != nil {
		streams.End()
	}
	report.Summary(c.App.Writer, shown, c.String("export"))
	if code := report.ExitStatus(shown); code != 0 {
		return cli.Exit("", code)
	}
	return nil
}

// scriptSource is the script a run runs and its arguments: SCRIPT, or
// the code of -c CODE or of standard input (SCRIPT "-"), written to a
// private temporary file named -c or - (removed by the returned func),
// which the guest sees as /run/apysup/job/-c or /run/apysup/job/-.
func scriptSource(c *cli.Context) (path string, args []string, remove func(), err error) {
	usage := func(msg string) (string, []string, func(), error) {
		return "", nil, nil, cli.Exit(msg+" (see --help)", ExitUsage)
	}
	var code []byte
	name := ""
	switch {
	case c.IsSet("c"):
		code, name, args = []byte(c.String("c")), "-c", c.Args().Slice()
	case c.NArg() < 1:
		return usage("expected SCRIPT [ARGS...], -c CODE [ARGS...] or - [ARGS...]")
	case c.Args().First() == "-":
		code, err = io.ReadAll(io.LimitReader(c.App.Reader, sandbox.MaxScriptBytes+1))
		if err != nil {
			return usage(fmt.Sprintf("reading the script from standard input: %v", err))
		}
		if len(code) > sandbox.MaxScriptBytes {
			return usage(fmt.Sprintf("the script on standard input is larger than %d bytes", sandbox.MaxScriptBytes))
		}
		name, args = "-", c.Args().Tail()
	default:
		path := c.Args().First()
		if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
			return usage(fmt.Sprintf("script %s: not a readable file", path))
		}
		return path, c.Args().Tail(), func() {}, nil
	}
	// A locked directory (mode 0700: the code is the user's): a run killed
	// before it removes its own is swept by the next one.
	_ = sandbox.SweepLockedDirs(os.TempDir(), codeDirPrefix, nil)
	dir, err := sandbox.NewLockedDir(os.TempDir(), codeDirPrefix)
	if err != nil {
		return "", nil, nil, cli.Exit(err.Error(), ExitSetupFailed)
	}
	remove = func() { _ = dir.Remove() }
	path = filepath.Join(dir.Path, name)
	if err := os.WriteFile(path, code, 0o600); err != nil {
		remove()
		return "", nil, nil, cli.Exit(err.Error(), ExitSetupFailed)
	}
	return path, args, remove, nil
}

// codeDirPrefix names the temporary directories of run -c and run -.
const codeDirPrefix = "apysup-code-"

// fromFlag reads back a choice only a flag makes (its absence, "", is the
// default: an empty workspace, no export).
func fromFlag(c *cli.Context, name string) supervisor.Selected {
	if c.IsSet(name) {
		return supervisor.Selected{Name: name, Value: c.String(name), Source: SourceFlag}
	}
	return supervisor.Selected{Name: name, Source: SourceDefault}
}

// loadPlan seals the manifest at path, or an empty Plan, and builds its
// handlers; the Closer releases them.
func loadPlan(path string) (*plan.Plan, *broker.Handlers, io.Closer, error) {
	if path == "" {
		r, _ := plan.NewRegistry(16)
		p, err := r.Seal()
		return p, broker.NewHandlers(), io.NopCloser(nil), err
	}
	fail := func(err error) (*plan.Plan, *broker.Handlers, io.Closer, error) {
		return nil, nil, nil, cli.Exit(fmt.Sprintf("%s:\n%v", path, err), 2)
	}
	m, err := plan.LoadManifest(path)
	if err != nil {
		return fail(err)
	}
	p, err := seal(m)
	if err != nil {
		return fail(err)
	}
	hs, closer, err := buildHandlers(m)
	if err != nil {
		return fail(err)
	}
	return p, hs, closer, nil
}
