package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/cmd/apysup/internal/report"
	"github.com/apysup/apysup/internal/rpc"
)

// Approval modes of `apysup run --approve`.
const (
	approvePrompt = "prompt"
	approveDeny   = "deny"
	approveAuto   = "auto"
	approveSocket = "socket"
)

const approveUsage = "how approvals are decided, `MODE`: prompt (ask y/n on the terminal: questions on stderr, " +
	"answers from stdin), deny, auto (approve each; still recorded) or socket:PATH (serve an admin socket, mode 0600, " +
	"for apysup approvals); default prompt when stdin and stderr are both terminals, deny otherwise"

// approveMode is what --approve asked for.
type approveMode struct {
	kind   string
	socket string // with approveSocket
}

func parseApproveMode(s string) (approveMode, error) {
	switch s {
	case approvePrompt, approveDeny, approveAuto:
		return approveMode{kind: s}, nil
	}
	if path, ok := strings.CutPrefix(s, approveSocket+":"); ok && path != "" {
		return approveMode{kind: approveSocket, socket: path}, nil
	}
	return approveMode{}, fmt.Errorf("--approve must be prompt, deny, auto or socket:PATH, not %q", s)
}

// defaultApproveMode asks a person only when there is one to ask: both
// the answers' stream and the questions' are terminals.
func defaultApproveMode(stdin io.Reader, stderr io.Writer) approveMode {
	if report.IsTerminal(stdin) && report.IsTerminal(stderr) {
		return approveMode{kind: approvePrompt}
	}
	return approveMode{kind: approveDeny}
}

// discardTypedAhead drops input the terminal holds but nobody has read
// yet, so that a key pressed before a question is never its answer.
func discardTypedAhead(in io.Reader) {
	if f, ok := in.(*os.File); ok && report.IsTerminal(f) {
		if raw, err := f.SyscallConn(); err == nil {
			_ = raw.Control(func(fd uintptr) { _ = unix.IoctlSetInt(int(fd), unix.TCFLSH, unix.TCIFLUSH) })
		}
	}
}

// startApprover decides the run's approval requests as the selected
// approval mode says (--approve, APYSUP_APPROVE, the config file or the
// terminal-dependent default) until the returned stop is called; stop
// waits for it. Questions and notes go to out (the user's stderr).
func startApprover(ctx context.Context, c *cli.Context, selected string, a *broker.Approvals, out io.Writer) (stop func(), err error) {
	mode, err := parseApproveMode(selected)
	if err != nil {
		return nil, err
	}
	return startApproverMode(ctx, mode, a, c.App.Reader, out)
}

func startApproverMode(ctx context.Context, mode approveMode, a *broker.Approvals, in io.Reader, out io.Writer) (func(), error) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	stop := func() { cancel(); wg.Wait() }
	// Subscribed before the run starts: no request can be missed.
	events, unsubscribe := a.Subscribe()
	switch mode.kind {
	case approveDeny, approveAuto:
		decide := a.Reject
		if mode.kind == approveAuto {
			decide = a.Approve
		}
		wg.Go(func() { defer unsubscribe(); decideByPolicy(ctx, a, events, decide) })
	case approvePrompt:
		p := newPrompter(a, in, out)
		wg.Go(func() { defer unsubscribe(); p.run(ctx, events) })
	case approveSocket:
		l, err := rpc.ListenApprovalSocket(mode.socket)
		if err != nil {
			unsubscribe()
			cancel()
			return nil, err
		}
		srv := rpc.NewApprovalServer(a, rpc.ServerConfig{})
		wg.Go(func() { _ = srv.Serve(l) })
		wg.Go(func() { defer unsubscribe(); announce(ctx, out, mode.socket, events) })
		fmt.Fprintf(out, "apysup: approvals wait on %s (apysup approvals list --socket %s)\n", report.TerminalSafe(mode.socket), report.TerminalSafe(mode.socket))
		stop = func() {
			cancel()
			_ = srv.Close() // closes the listener, which removes the socket
			wg.Wait()
		}
	default:
		unsubscribe()
		cancel()
		return nil, fmt.Errorf("unknown approval mode %q", mode.kind)
	}
	return stop, nil
}

// decideByPolicy decides every waiting request the same way. Events only
// wake it: Pending is the truth (a subscriber may miss events).
func decideByPolicy(ctx context.Context, a *broker.Approvals, events <-chan broker.ApprovalEvent, decide func(string) error) {
	decideAll := func(broker.ApprovalEvent) {
		for _, p := range a.Pending() {
			_ = decide(p.ID)
		}
	}
	decideAll(broker.ApprovalEvent{})
	onEvents(ctx, events, decideAll)
}

// announce tells the terminal that a request waits on the admin socket,
// how it was decided, and when an approved call was not dispatched after
// all (its context ended or its lease ran out first).
func announce(ctx context.Context, out io.Writer, socket string, events <-chan broker.ApprovalEvent) {
	told := map[string]broker.ApprovalRecord{} // bounded by the audit's records
	onEvents(ctx, events, func(ev broker.ApprovalEvent) {
		r, before := ev.Record, told[ev.Record.ID]
		told[r.ID] = r
		switch {
		case r.State == before.State && r.Dispatch == before.Dispatch:
			// said already
		case r.State == broker.ApprovalWaiting:
			fmt.Fprintf(out, "apysup: approval %s waiting: %s %s, plan %s, lease %s (apysup approvals approve --socket %s %s)\n",
				r.ID, report.TerminalSafe(r.Capability), report.TerminalSafe(r.CallID), report.TerminalSafe(report.ShortDigest(r.PlanSHA256)), r.Lease, report.TerminalSafe(socket), r.ID)
		case r.State != before.State:
			fmt.Fprintf(out, "apysup: approval %s %s\n", r.ID, r.State)
		case r.Dispatch == broker.DispatchCancelled || r.Dispatch == broker.DispatchExpired:
			fmt.Fprintf(out, "apysup: approval %s approved, but not dispatched: %s before dispatch\n", r.ID, r.Dispatch)
		}
	})
}

// onEvents calls fn with each event until ctx ends or the subscription does.
func onEvents(ctx context.Context, events <-chan broker.ApprovalEvent, fn func(broker.ApprovalEvent)) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			fn(ev)
		}
	}
}

// A prompter asks a person about each waiting request, one at a time in
// arrival order, while the guest stays blocked in its call. Questions go
// to stderr and answers come from stdin (the two the default checks):
// stdout stays the run's result, so `apysup run --json > result.json`
// still asks, and an explicit --approve prompt also works from a pipe.
type prompter struct {
	a     *broker.Approvals
	in    io.Reader
	out   io.Writer
	lines chan inputLine
	gen   atomic.Uint64 // the question being asked; an answer carries it
	ended bool          // the input ended for good: every request is rejected
}

// inputLine is one answer read from the input.
type inputLine struct {
	text  string
	eof   bool // Ctrl-D on a terminal, or the end of the input
	final bool // nothing more will come
	gen   uint64
}

// maxAnswerBytes bounds one answer line; a longer one is not an answer.
const maxAnswerBytes = 64

func newPrompter(a *broker.Approvals, in io.Reader, out io.Writer) *prompter {
	return &prompter{a: a, in: in, out: out, lines: make(chan inputLine)}
}

func (p *prompter) printf(format string, args ...any) { fmt.Fprintf(p.out, format, args...) }

// run asks until ctx ends. The reader goroutine it starts ends at the end
// of the input or, blocked in a read when ctx ends, at the next line.
func (p *prompter) run(ctx context.Context, events <-chan broker.ApprovalEvent) {
	go p.read(ctx.Done(), report.IsTerminal(p.in))
	asked := map[string]bool{}
	for {
		next, more := p.next(asked)
		if next == nil {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-events:
				if !ok {
					return
				}
			case l := <-p.lines: // typed while nothing was asked: never an answer
				p.ended = p.ended || l.final
				if !l.final {
					p.printf("apysup: no approval request is waiting; input ignored\n")
				}
			}
			continue
		}
		asked[next.ID] = true
		if !p.ask(ctx, events, *next, more) {
			return
		}
	}
}

// next returns the oldest waiting request not yet asked about, and how
// many others wait; it forgets requests that no longer wait.
func (p *prompter) next(asked map[string]bool) (*broker.PendingRequest, int) {
	pending := p.a.Pending()
	waiting := make(map[string]bool, len(pending))
	var next *broker.PendingRequest
	for i := range pending {
		waiting[pending[i].ID] = true
		if next == nil && !asked[pending[i].ID] {
			next = &pending[i]
		}
	}
	for id := range asked {
		if !waiting[id] {
			delete(asked, id)
		}
	}
	return next, len(pending) - 1
}

func (p *prompter) read(done <-chan struct{}, terminal bool) {
	r := bufio.NewReaderSize(p.in, 256)
	for {
		text, err := readAnswer(r)
		l := inputLine{text: text, gen: p.gen.Load()}
		if err != nil {
			// On a terminal Ctrl-D ends one read, not the input.
			l.eof, l.final = true, !(terminal && errors.Is(err, io.EOF))
		}
		select {
		case p.lines <- l:
		case <-done:
			return
		}
		if l.final {
			return
		}
	}
}

// readAnswer reads one line; a line longer than maxAnswerBytes is read to
// its end and returned as "\uFFFD", which is no answer.
func readAnswer(r *bufio.Reader) (string, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxAnswerBytes {
			line = []byte("\uFFFD")
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return string(line), err
		}
	}
}

// ask shows one request and waits for its answer, its expiry or its
// decision elsewhere. It returns false when ctx ended.
func (p *prompter) ask(ctx context.Context, events <-chan broker.ApprovalEvent, req broker.PendingRequest, more int) bool {
	gen := p.gen.Add(1)
	discardTypedAhead(p.in)
	p.show(req, more)
	if p.ended {
		p.printf("(no input)\n")
		p.settle(req.ID, p.a.Reject, "rejected: the input has ended")
		return true
	}
	expiry := time.NewTimer(time.Until(req.ExpiresAt))
	defer expiry.Stop()
	for {
		select {
		case <-ctx.Done(): // the run is ending: the Broker cancels the call
			p.printf("\n%s\n", decidedElsewhere(broker.ApprovalCancelled))
			return false
		case ev, ok := <-events:
			if !ok {
				return false
			}
			if ev.Record.ID == req.ID && ev.Record.State != broker.ApprovalWaiting {
				p.printf("\n%s\n", decidedElsewhere(ev.Record.State))
				return true
			}
		case <-expiry.C:
			p.printf("\n%s\n", decidedElsewhere(broker.ApprovalExpired))
			return true
		case l := <-p.lines:
			if l.gen != gen {
				continue // read before this question was shown
			}
			p.ended = p.ended || l.final
			switch answer := strings.ToLower(strings.TrimSpace(l.text)); {
			case l.eof:
				p.printf("\n")
				p.settle(req.ID, p.a.Reject, "rejected (end of input)")
				return true
			case answer == "y" || answer == "yes":
				p.settle(req.ID, p.a.Approve, "approved")
				return true
			case answer == "n" || answer == "no":
				p.settle(req.ID, p.a.Reject, "rejected")
				return true
			default:
				p.printf("please answer y or n: ")
			}
		}
	}
}

func (p *prompter) show(req broker.PendingRequest, more int) {
	left := max(time.Until(req.ExpiresAt).Round(time.Second), 0)
	waiting := ""
	if more > 0 {
		waiting = fmt.Sprintf(" (%d more waiting)", more)
	}
	p.printf("\napysup: approval needed%s\n"+
		"  capability  %s\n"+
		"  call id     %s\n"+
		"  arguments   %s\n"+
		"  run         %s\n"+
		"  plan        %s\n"+
		"  lease       %s, %s left\n"+
		"  request     %s\n"+
		"approve this call? [y/n] ",
		waiting, report.TerminalSafe(req.Capability), report.TerminalSafe(req.CallID), report.TerminalSafe(req.Preview),
		report.TerminalSafe(req.RunID), report.TerminalSafe(req.PlanSHA256), req.Lease, left, report.TerminalSafe(req.ID))
}

// settle decides id and says what happened; a request that left waiting
// meanwhile (its lease ran out) says that instead.
func (p *prompter) settle(id string, decide func(string) error, done string) {
	err := decide(id)
	if errors.Is(err, broker.ErrApprovalDecided) {
		rec, _ := p.a.Get(id)
		p.printf("too late: %s\n", decidedElsewhere(rec.State))
		return
	}
	if err != nil {
		p.printf("not decided: %v\n", err)
		return
	}
	p.printf("%s\n", done)
}

func decidedElsewhere(s broker.ApprovalState) string {
	switch s {
	case broker.ApprovalExpired:
		return "the lease ran out: the request expired and the call is refused"
	case broker.ApprovalCancelled:
		return "the call was cancelled (the run is ending)"
	}
	return "decided elsewhere: " + string(s)
}

// shorten cuts an already terminal-safe string to n runes.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// approvalsClientTimeout bounds one admin request.
const approvalsClientTimeout = 10 * time.Second

func approvalsCommand() *cli.Command {
	socket := &cli.StringFlag{Name: "socket", Usage: "the admin socket `PATH` of a run started with --approve socket:PATH (required)"}
	asJSON := &cli.BoolFlag{Name: "json", Usage: "print the admin API's JSON answer (a refusal too, as {\"error_code\"})"}
	decide := func(verb string) *cli.Command {
		return &cli.Command{
			Name:      verb,
			Usage:     verb + " the waiting request ID",
			ArgsUsage: "ID",
			Flags:     []cli.Flag{socket, asJSON},
			Action: func(c *cli.Context) error {
				client, err := approvalsClient(c, 1)
				if err != nil {
					return err
				}
				call := client.Approve
				if verb == "reject" {
					call = client.Reject
				}
				return approvalsAnswer(c, "apysup.approvals_decision.v1", func() (*rpc.ApprovalDecision, error) {
					rec, err := call(c.Context, c.Args().First())
					if err != nil {
						return nil, err
					}
					return &rpc.ApprovalDecision{Record: *rec}, nil
				}, printDecision)
			},
		}
	}
	return &cli.Command{
		Name:  "approvals",
		Usage: "list, approve or reject the approval requests of a run started with --approve socket:PATH",
		Description: "Talks to the run's admin socket (HTTP/1.1 JSON on a Unix socket, mode 0600; only the\n" +
			"supervisor's uid and root are answered). The guest waits inside its call until a decision,\n" +
			"its lease running out, or the end of the run.\n\n" +
			"Exit status: 0 done; 1 refused (the error code is printed: approval_not_found,\n" +
			"approval_already_decided, malformed_request, forbidden) or the socket unreachable; 2 usage.",
		Subcommands: []*cli.Command{
			{
				Name:  "list",
				Usage: "list the waiting requests (id, capability, call id, Plan digest, waiting for, lease left, preview)",
				Flags: []cli.Flag{socket, asJSON,
					&cli.BoolFlag{Name: "records", Usage: "list every record of the run's audit instead: its decision (state), " +
						"what became of an approved call (dispatch: none, dispatched, completed, ambiguous, cancelled or expired) " +
						"and its outcome; no previews"},
					&cli.DurationFlag{Name: "wait", Usage: "when nothing waits, hold up to `D` (at most 1m) for a request"},
				},
				Action: approvalsList,
			},
			decide("approve"),
			decide("reject"),
		},
	}
}

// approvalsClient checks the arguments (nargs IDs) and returns a client.
func approvalsClient(c *cli.Context, nargs int) (*rpc.ApprovalClient, error) {
	path := c.String("socket")
	switch {
	case path == "":
		return nil, cli.Exit("--socket PATH is required", 2)
	case c.NArg() != nargs:
		return nil, cli.Exit(fmt.Sprintf("expected %d argument(s), got %d (see --help)", nargs, c.NArg()), 2)
	}
	return rpc.NewApprovalClient(path, approvalsClientTimeout), nil
}

// approvalsRefusal prints a refusal's code (as JSON with --json) and
// exits 1.
func approvalsRefusal(c *cli.Context, err error) error {
	var ae *rpc.ApprovalError
	if !errors.As(err, &ae) {
		return cli.Exit("socket_unreachable: "+err.Error(), 1)
	}
	if c.Bool("json") {
		if err := printJSON(c, "apysup.approvals_error.v1", ae); err != nil {
			return err
		}
	}
	return cli.Exit(ae.Error(), 1)
}

func approvalsList(c *cli.Context) error {
	client, err := approvalsClient(c, 0)
	if err != nil {
		return err
	}
	wait := c.Duration("wait")
	if wait < 0 || wait > rpc.MaxApprovalWait {
		return cli.Exit(fmt.Sprintf("--wait must be 0..%s", rpc.MaxApprovalWait), 2)
	}
	if c.Bool("records") {
		return approvalsAnswer(c, "apysup.approvals_records.v1", func() (*rpc.ApprovalRecords, error) { return client.Records(c.Context) }, printRecords)
	}
	return approvalsAnswer(c, "apysup.approvals_list.v1", func() (*rpc.ApprovalList, error) { return client.List(c.Context, wait) }, printPending)
}

// approvalsAnswer asks, then prints the answer: as JSON with --json, else
// for a person.
func approvalsAnswer[T any](c *cli.Context, schema string, ask func() (T, error), print func(io.Writer, T)) error {
	answer, err := ask()
	if err != nil {
		return approvalsRefusal(c, err)
	}
	if c.Bool("json") {
		return printJSON(c, schema, answer)
	}
	print(c.App.Writer, answer)
	return nil
}

const previewColumn = 48

func printDecision(w io.Writer, d *rpc.ApprovalDecision) {
	r := d.Record
	fmt.Fprintf(w, "%s %s (%s, call %s, plan %s)\n", r.State, report.TerminalSafe(r.ID), report.TerminalSafe(r.Capability), report.TerminalSafe(r.CallID),
		report.TerminalSafe(report.ShortDigest(r.PlanSHA256)))
}

func printPending(w io.Writer, l *rpc.ApprovalList) {
	rows := make([][]string, 0, len(l.Pending))
	for _, p := range l.Pending {
		rows = append(rows, []string{report.TerminalSafe(p.ID), report.TerminalSafe(p.Capability), report.TerminalSafe(p.CallID), report.TerminalSafe(report.ShortDigest(p.PlanSHA256)),
			l.Now.Sub(p.CreatedAt).Round(time.Second).String(), max(p.ExpiresAt.Sub(l.Now).Round(time.Second), 0).String(),
			shorten(report.TerminalSafe(p.Preview), previewColumn)})
	}
	printTable(w, "no approval requests waiting", []string{"ID", "CAPABILITY", "CALL ID", "PLAN", "WAITING", "LEFT", "PREVIEW"}, rows)
}

func printRecords(w io.Writer, r *rpc.ApprovalRecords) {
	rows := make([][]string, 0, len(r.Records))
	for _, rec := range r.Records {
		outcome := cmp.Or(rec.Outcome, "-")
		rows = append(rows, []string{report.TerminalSafe(rec.ID), report.TerminalSafe(rec.Capability), report.TerminalSafe(rec.CallID), report.TerminalSafe(report.ShortDigest(rec.PlanSHA256)),
			report.TerminalSafe(string(rec.State)), report.TerminalSafe(string(rec.Dispatch)), r.Now.Sub(rec.CreatedAt).Round(time.Second).String(),
			report.TerminalSafe(outcome)})
	}
	printTable(w, "no approval records", []string{"ID", "CAPABILITY", "CALL ID", "PLAN", "STATE", "DISPATCH", "AGE", "OUTCOME"}, rows)
}

// printTable prints terminal-safe cells in aligned columns, or none when
// there are no rows.
func printTable(w io.Writer, none string, header []string, rows [][]string) {
	if len(rows) == 0 {
		fmt.Fprintln(w, none)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, row := range append([][]string{header}, rows...) {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
}
