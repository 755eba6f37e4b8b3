package main

import (
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/apysup/apysup/internal/journal"
)

// stateFlag names the journal's directory (apysup run, apysup journal).
var stateFlag = &cli.StringFlag{Name: "state", Usage: "the journal's state `DIR` (created 0700 if missing)"}

func journalCommand() *cli.Command {
	required := func() []cli.Flag {
		return []cli.Flag{&cli.StringFlag{Name: "state", Required: true, Usage: "the journal's state `DIR`"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"}}
	}
	return &cli.Command{
		Name:  "journal",
		Usage: "show, verify or compact the journal of runs under idempotency keys (run --idempotency-key KEY --state DIR)",
		Subcommands: []*cli.Command{
			{
				Name:  "show",
				Usage: "list every run and call of the journal with what it can say of each call: completed, unknown or absent",
				Description: "A call is completed (its outcome and receipt are recorded: running again replays it),\n" +
					"unknown (its dispatch began and no outcome was recorded: it may have acted; running again\n" +
					"answers dispatch_outcome_unknown) or absent (never dispatched). A run is running (or its\n" +
					"process died: dead), incomplete (killed, refused: running again retries it), completed\n" +
					"or compacted. A call waiting for approval in a run whose process died says so.",
				Flags:  required(),
				Action: showJournal,
			},
			{
				Name:  "verify",
				Usage: "recompute the journal: its hash chain, its records against the chain, every payload and receipt",
				Description: "Exit status 1 with every problem found (journal_chain_broken, journal_entry_altered,\n" +
					"journal_epoch_mismatch, journal_state_mismatch, journal_payload_altered,\n" +
					"journal_receipt_invalid); 0 when the journal is intact.",
				Flags:  required(),
				Action: verifyJournal,
			},
			{
				Name:  "compact",
				Usage: "drop the results and payloads of runs completed longer ago than --older-than, keeping tombstones",
				Description: "A tombstone keeps, per call, its id, request digest, outcome, error code and receipt id (a\n" +
					"different request under the id is still refused) and, per run, its key and fingerprint\n" +
					"(running again under the key is refused: idempotency_key_compacted).",
				Flags:  append(required(), &cli.StringFlag{Name: "older-than", Value: "720h", Usage: "the retention horizon, a `DURATION`"}),
				Action: compactJournal,
			},
		},
	}
}

func openJournal(c *cli.Context) (*journal.Journal, error) {
	j, err := journal.Open(c.String("state"), journal.Options{Failpoint: failpoint})
	if err != nil {
		return nil, cli.Exit(err.Error(), 1)
	}
	return j, nil
}

type journalCall struct {
	CallID        string `json:"call_id"`
	Answer        string `json:"answer"`
	State         string `json:"state"`
	ApprovalID    string `json:"approval_request_id,omitempty"`
	ApprovalState string `json:"approval_state,omitempty"`
	Outcome       string `json:"outcome,omitempty"`
	ErrorCode     string `json:"error_code,omitempty"`
	ReceiptID     string `json:"receipt_id,omitempty"`
}

type journalRun struct {
	Key        string        `json:"key"`
	State      string        `json:"state"`
	Attempts   int           `json:"attempts"`
	Status     string        `json:"status,omitempty"`
	PlanSHA256 string        `json:"plan_sha256"`
	Calls      []journalCall `json:"calls"`
}

func showJournal(c *cli.Context) error {
	j, err := openJournal(c)
	if err != nil {
		return err
	}
	defer j.Close()
	runs, err := j.Runs(c.Context)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	out := []journalRun{}
	for _, r := range runs {
		jr := journalRun{Key: r.Key, State: r.State, Attempts: r.Attempts, Status: r.Status, PlanSHA256: r.Fingerprint.PlanSHA256, Calls: []journalCall{}}
		if r.State == journal.RunRunning && !journal.OwnerAlive(r.Owner) {
			jr.State = "dead"
		}
		calls, err := j.Calls(c.Context, r.Key)
		if err != nil {
			return cli.Exit(err.Error(), 1)
		}
		for _, call := range calls {
			jc := journalCall{CallID: call.CallID, Answer: string(call.Answer()), State: call.State, ApprovalID: call.ApprovalID,
				ApprovalState: call.ApprovalState, Outcome: call.Outcome, ErrorCode: call.ErrorCode, ReceiptID: call.ReceiptID}
			if call.State == journal.CallAwaiting && jr.State == "dead" {
				jc.ApprovalState = "pending_dead_run"
			}
			jr.Calls = append(jr.Calls, jc)
		}
		out = append(out, jr)
	}
	if c.Bool("json") {
		return printJSON(c, "apysup.journal_show.v1", map[string]any{"runs": out})
	}
	printJournal(c.App.Writer, out)
	return nil
}

func printJournal(w io.Writer, runs []journalRun) {
	if len(runs) == 0 {
		fmt.Fprintln(w, "no runs")
	}
	for _, r := range runs {
		fmt.Fprintf(w, "%s  %s  attempts %d", r.Key, r.State, r.Attempts)
		if r.Status != "" {
			fmt.Fprintf(w, "  status %s", r.Status)
		}
		fmt.Fprintln(w)
		for _, c := range r.Calls {
			fmt.Fprintf(w, "  %-24s %-9s", c.CallID, c.Answer)
			if c.Outcome != "" {
				fmt.Fprintf(w, " %s", c.Outcome)
			}
			if c.ErrorCode != "" {
				fmt.Fprintf(w, " %s", c.ErrorCode)
			}
			if c.ApprovalState != "" {
				fmt.Fprintf(w, " approval %s", c.ApprovalState)
			}
			fmt.Fprintln(w)
		}
	}
}

func verifyJournal(c *cli.Context) error {
	j, err := openJournal(c)
	if err != nil {
		return err
	}
	defer j.Close()
	problems := j.Verify(c.Context)
	if problems == nil {
		problems = []journal.Problem{}
	}
	if c.Bool("json") {
		if err := printJSON(c, "apysup.journal_verify.v1", map[string]any{"ok": len(problems) == 0, "problems": problems}); err != nil {
			return err
		}
	} else if len(problems) == 0 {
		fmt.Fprintln(c.App.Writer, "ok: the journal is intact")
	} else {
		for _, p := range problems {
			fmt.Fprintf(c.App.Writer, "%s: entry %d run %q call %q: %s\n", p.Code, p.Seq, p.RunKey, p.CallID, p.Message)
		}
	}
	if len(problems) > 0 {
		return cli.Exit("", 1)
	}
	return nil
}

func compactJournal(c *cli.Context) error {
	horizon, err := time.ParseDuration(c.String("older-than"))
	if err != nil || horizon < 0 {
		return cli.Exit("--older-than: want a duration such as 720h", ExitUsage)
	}
	j, err := openJournal(c)
	if err != nil {
		return err
	}
	defer j.Close()
	n, err := j.Compact(c.Context, time.Now().Add(-horizon).UnixMilli())
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	if c.Bool("json") {
		return printJSON(c, "apysup.journal_compact.v1", map[string]any{"compacted_runs": n})
	}
	fmt.Fprintf(c.App.Writer, "compacted %d runs\n", n)
	return nil
}
