package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/apysup/apysup/internal/journal"
	"github.com/apysup/apysup/internal/serve"
)

// defaultServeState is where `apysup serve` keeps its runs' directories.
const defaultServeState = "/run/apysup/state"

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve the run API (docs/api.md) on a Unix socket, and on TCP with a bearer token",
		Description: "Runs scripts for clients over HTTP/JSON: POST /v1/runs takes a script, its Plan (a manifest or\n" +
			"the digest of one sealed by POST /v1/plans), limits and workspace, and answers the RunResult of\n" +
			"`apysup run --json`; GET /v1/runs/ID/events streams its events; GET /metrics is Prometheus's.\n" +
			"The OpenAPI document is GET /v1/openapi.json.\n\n" +
			"A Unix socket (default " + serve.DefaultSocket + ", mode 0660) serves root and the members of its\n" +
			"group (checked by SO_PEERCRED); TCP needs --token-file, whose token every request must carry\n" +
			"(Authorization: Bearer). On start it sweeps what a killed predecessor left in --state. SIGTERM\n" +
			"or SIGINT: admit nothing more, let runs finish within --grace, cancel the rest, destroy the pool,\n" +
			"exit 0.",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "listen", Usage: "`ADDR`: unix:PATH or tcp:HOST:PORT (repeatable; default unix:" + serve.DefaultSocket + ")"},
			&cli.StringFlag{Name: "token-file", Usage: "`FILE` (mode 0600) holding the bearer token TCP clients must send"},
			&cli.StringFlag{Name: "state", Value: defaultServeState, Usage: "`DIR` of the runs' directories"},
			&cli.IntFlag{Name: "pool", Usage: "keep `N` native sandboxes started for runs with the default limits"},
			&cli.IntFlag{Name: "wazero-pool", Usage: "keep `N` wazero child processes loaded for runs on wazero"},
			&cli.IntFlag{Name: "max-concurrent", Usage: "run at most `N` scripts at once (default: the number of CPUs)"},
			&cli.IntFlag{Name: "queue", Usage: "let `N` more runs wait (default 4 x max-concurrent); beyond, 429"},
			&cli.DurationFlag{Name: "grace", Value: serveGrace, Usage: "how long runs may finish after SIGTERM"},
			&cli.StringFlag{Name: "journal", Usage: "keep a journal in `DIR` so that runs may name an idempotency_key (docs/spec.md section 10)"},
			&cli.StringSliceFlag{Name: "allow-handlers", Usage: "handler `KIND`s a posted manifest may use besides builtin (exec, http and kv act on the host as the server)"},
		},
		Action: serveAction,
	}
}

const serveGrace = 30 * time.Second

func serveAction(c *cli.Context) error {
	// A server outlives the reader of its log (`apysup serve 2>&1 | tee
	// serve.log`, and tee ends): a line written to it then is lost, where
	// Go's default would end the server by SIGPIPE at that line (its own,
	// net/http's or libcontainer's), mid-run, leaving its runs' sandboxes
	// for the next server to sweep.
	failBrokenPipes()
	specs := c.StringSlice("listen")
	if len(specs) == 0 {
		specs = []string{"unix:" + serve.DefaultSocket}
	}
	queue := c.Int("queue")
	if c.IsSet("queue") && queue == 0 {
		queue = -1 // none
	}
	// The listeners first: one that cannot open (a token file others may
	// read) refuses the serve before the server makes anything (the native
	// backend's mounts under --state, which a refusal after it left).
	var ls []*serve.Listener
	closeListeners := func() {
		for _, l := range ls {
			l.Close()
		}
	}
	for _, spec := range specs {
		l, err := serve.Listen(spec, c.String("token-file"))
		if err != nil {
			closeListeners()
			return cli.Exit(err.Error(), ExitUsage)
		}
		ls = append(ls, l)
	}
	state := c.String("state")
	created := false
	if _, err := os.Stat(state); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(state, 0o700); err != nil {
			closeListeners()
			return cli.Exit(err.Error(), ExitSetupFailed)
		}
		created = true
	}
	var jn *journal.Journal
	if dir := c.String("journal"); dir != "" {
		var err error
		if jn, err = journal.Open(dir, journal.Options{Failpoint: failpoint}); err != nil {
			closeListeners()
			return cli.Exit(err.Error(), ExitSetupFailed)
		}
		defer jn.Close()
	}
	srv, err := serve.New(serve.Config{StateDir: state, Pool: c.Int("pool"), WazeroPool: c.Int("wazero-pool"), MaxConcurrent: c.Int("max-concurrent"),
		Queue: queue, AllowHandlers: c.StringSlice("allow-handlers"), Journal: jn})
	if err != nil {
		closeListeners()
		return cli.Exit(err.Error(), ExitSetupFailed)
	}
	// Announced once every listener is open: a refusal (a token file's)
	// comes before any "serving on".
	for _, l := range ls {
		fmt.Fprintf(c.App.ErrWriter, "apysup: serving on %s\n", l.Name)
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = srv.Serve(ctx, ls, c.Duration("grace"))
	if created {
		_ = os.Remove(state) // empty after the drain: a run directory left in it is a leak to see
	}
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	fmt.Fprintln(c.App.ErrWriter, "apysup: drained and stopped")
	return nil
}
