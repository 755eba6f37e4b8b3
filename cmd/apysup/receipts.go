package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/cmd/apysup/internal/report"
	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/plan"
)

func receiptsCommand() *cli.Command {
	return &cli.Command{
		Name:  "receipts",
		Usage: "check the host-authored receipts of a run",
		Subcommands: []*cli.Command{{
			Name:      "verify",
			Usage:     "recompute every receipt of RESULT.json (from `apysup run --json`) and its binding to the Plan of MANIFEST",
			ArgsUsage: "RESULT.json",
			Description: "Checks: the result's plan_sha256 is the identity of MANIFEST sealed now; every receipt is\n" +
				"well-formed (no unknown fields), recomputes to its receipt_id, binds this run and this Plan, in\n" +
				"operation order, with well-formed call ids (a programmatic id names its parent); at most\n" +
				"256 receipts; the workspace receipt recomputes. Prints every failure; exit status 1 if any.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "plan", Usage: "the manifest `FILE` the run used (required)"},
				&cli.BoolFlag{Name: "json", Usage: "print the findings as JSON"},
			},
			Action: verifyReceipts,
		}},
	}
}

// runDocument is the part of a RunResult that verification reads; the
// receipts stay raw so that an added or changed field is seen.
type runDocument struct {
	RunID      string            `json:"run_id"`
	PlanSHA256 string            `json:"plan_sha256"`
	Receipts   []json.RawMessage `json:"receipts"`
	Workspace  json.RawMessage   `json:"workspace_receipt"`
}

// readRunResult is the common start of `receipts verify` and `events
// verify`: the manifest sealed now, and RESULT.json decoded into doc.
func readRunResult(c *cli.Context, doc any) (*plan.Plan, error) {
	if c.NArg() != 1 {
		return nil, cli.Exit("expected exactly one RESULT.json argument (see --help)", ExitUsage)
	}
	if c.String("plan") == "" {
		return nil, cli.Exit("--plan FILE is required (see --help)", ExitUsage)
	}
	p, err := sealManifest(c.String("plan"))
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(c.Args().First())
	if err != nil {
		return nil, cli.Exit(err.Error(), 2)
	}
	if err := json.Unmarshal(data, doc); err != nil {
		return nil, cli.Exit(fmt.Sprintf("%s: not a RunResult: %v", c.Args().First(), err), 2)
	}
	return p, nil
}

func verifyReceipts(c *cli.Context) error {
	var doc runDocument
	p, err := readRunResult(c, &doc)
	if err != nil {
		return err
	}
	var problems []broker.VerifyProblem
	if doc.PlanSHA256 != p.Identity() {
		problems = append(problems, broker.VerifyProblem{Index: -1, Code: broker.CodeReceiptPlan,
			Detail: fmt.Sprintf("the run names plan %s, the manifest seals to %s", doc.PlanSHA256, p.Identity())})
	}
	if err := broker.VerifyReceipts(p.Identity(), doc.RunID, doc.Receipts); err != nil {
		problems = append(problems, err.(*broker.VerifyError).Problems...)
	}
	if len(doc.Workspace) > 0 && string(doc.Workspace) != "null" {
		var w sandbox.WorkspaceReceipt
		if err := canonjson.DecodeStrict(doc.Workspace, canonjson.MaxGuestBytes, &w); err != nil || !w.Verify() || w.RunID != doc.RunID || w.PlanSHA256 != p.Identity() {
			problems = append(problems, broker.VerifyProblem{Index: -1, Code: "workspace_receipt_invalid", Detail: "the workspace receipt does not recompute or binds another run or plan"})
		}
	}
	if problems == nil {
		problems = []broker.VerifyProblem{} // the document says [], never null
	}
	if c.Bool("json") {
		if err := printJSON(c, "apysup.receipts_verify.v1", map[string]any{"ok": len(problems) == 0, "receipts": len(doc.Receipts), "problems": problems}); err != nil {
			return err
		}
	} else if len(problems) == 0 {
		fmt.Fprintf(c.App.Writer, "ok: %d receipts verify against plan %s\n", len(doc.Receipts), p.Identity())
	} else {
		for _, pr := range problems {
			where := "run"
			if pr.Index >= 0 {
				where = fmt.Sprintf("receipt %d", pr.Index)
			}
			fmt.Fprintf(c.App.Writer, "FAIL %s: %s: %s\n", where, pr.Code, report.UserMessage(pr.Detail))
		}
	}
	if len(problems) > 0 {
		return cli.Exit("", 1)
	}
	return nil
}
