package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/cmd/apysup/internal/report"
)

func eventsCommand() *cli.Command {
	return &cli.Command{
		Name:  "events",
		Usage: "check the hash-chained event ledger of a run",
		Subcommands: []*cli.Command{{
			Name:      "verify",
			Usage:     "recompute the event ledger of RESULT.json (from `apysup run --json`) against its receipts and the Plan of MANIFEST",
			ArgsUsage: "RESULT.json",
			Description: "Checks: every event recomputes to its digest (apysup.event.v1), links to the previous one, in\n" +
				"sequence, and the last is events_head: an event removed, reordered or altered is found;\n" +
				"run_admitted comes first and names the result's run and the Plan MANIFEST seals to now,\n" +
				"run_ended comes last with the result's status, error code, exit code and receipt count\n" +
				"(so an edited exit_code is found); the call_receipt events name the result's receipts, in order, and every\n" +
				"admitted call ended in a receipt or a grant refusal; the workspace event names the workspace\n" +
				"receipt. Prints every failure; exit status 1 if any.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "plan", Usage: "the manifest `FILE` the run used (required)"},
				&cli.BoolFlag{Name: "json", Usage: "print the findings as JSON"},
			},
			Action: verifyEvents,
		}},
	}
}

// eventsDocument is the part of a RunResult that the ledger check reads.
type eventsDocument struct {
	RunID      string           `json:"run_id"`
	PlanSHA256 string           `json:"plan_sha256"`
	Status     string           `json:"status"`
	ErrorCode  string           `json:"error_code"`
	ExitCode   int              `json:"exit_code"`
	Receipts   []broker.Receipt `json:"receipts"`
	Workspace  *struct {
		ReceiptID string `json:"receipt_id"`
	} `json:"workspace_receipt"`
	Events     []broker.Event `json:"events"`
	EventsHead string         `json:"events_head"`
}

func verifyEvents(c *cli.Context) error {
	var doc eventsDocument
	p, err := readRunResult(c, &doc)
	if err != nil {
		return err
	}
	run := broker.RunEvidence{RunID: doc.RunID, PlanSHA256: p.Identity(), Status: doc.Status, ErrorCode: doc.ErrorCode,
		ExitCode: doc.ExitCode, Receipts: doc.Receipts}
	if doc.Workspace != nil {
		run.WorkspaceReceiptID = doc.Workspace.ReceiptID
	}
	problems := broker.VerifyRunLedger(doc.Events, doc.EventsHead, run)
	if doc.PlanSHA256 != p.Identity() {
		problems = append(problems, broker.LedgerProblem{Code: broker.LedgerPlan,
			Detail: fmt.Sprintf("the run names plan %s, the manifest seals to %s", doc.PlanSHA256, p.Identity())})
	}
	if problems == nil {
		problems = []broker.LedgerProblem{}
	}
	if c.Bool("json") {
		if err := printJSON(c, "apysup.events_verify.v1", map[string]any{"ok": len(problems) == 0, "events": len(doc.Events), "problems": problems}); err != nil {
			return err
		}
	} else if len(problems) == 0 {
		fmt.Fprintf(c.App.Writer, "ok: %d events chain to %s and agree with %d receipts\n", len(doc.Events), doc.EventsHead, len(doc.Receipts))
	} else {
		for _, pr := range problems {
			where := "ledger"
			if pr.Seq > 0 {
				where = fmt.Sprintf("event %d", pr.Seq)
			}
			fmt.Fprintf(c.App.Writer, "FAIL %s: %s: %s\n", where, pr.Code, report.UserMessage(pr.Detail))
		}
	}
	if len(problems) > 0 {
		return cli.Exit("", 1)
	}
	return nil
}
