package parity

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/supervisor"
)

// TestCompare checks the comparison itself, without any backend: what
// normalisation drops, what it keeps, and how documented differences are
// held to their pinned values.
func TestCompare(t *testing.T) {
	const planID = "sha256:" + "11111111111111111111111111111111" + "11111111111111111111111111111111"
	result := func(backend, runID string, mutate func(*supervisor.Result)) observation {
		r := &supervisor.Result{RunID: runID, Backend: backend, PlanSHA256: planID, Status: sandbox.StatusOK,
			Stdout: "hello\n", Stderr: "a warning\nlast line\n", Result: []byte(`{"a":1}`),
			Receipts: []broker.Receipt{{SchemaVersion: broker.ReceiptSchemaVersion, ReceiptID: "sha256:receipt-of-" + runID,
				RunID: runID, PlanSHA256: planID, CallID: "main:program:1", ParentCallID: "main",
				ApprovalRequestID: "apr-" + runID, Capability: "echo.say", RequestSHA256: "sha256:req",
				Outcome: "ok", ResponseSHA256: "sha256:resp"}},
			Workspace: &sandbox.WorkspaceReceipt{RunID: runID, FinalTreeSHA256: "sha256:tree", EntryCount: 2, Bytes: 10}}
		if mutate != nil {
			mutate(r)
		}
		c := &counter{n: map[string]int{"echo.say": 1}}
		return observe(r, c)
	}
	cases := []struct {
		name               string
		tc                 corpusCase
		native, wazero     func(*supervisor.Result)
		matched, differ    int
		documented         []string
		problemsContaining []string
	}{
		{name: "run ids and approval ids are not compared", matched: len(fieldOrder)},
		{name: "stdout differs", wazero: func(r *supervisor.Result) { r.Stdout = "hullo\n" },
			matched: len(fieldOrder) - 1, differ: 1, problemsContaining: []string{"stdout differs"}},
		{name: "stderr above the last line is not compared", wazero: func(r *supervisor.Result) { r.Stderr = "other\nlast line" },
			matched: len(fieldOrder)},
		{name: "a receipt field differs", wazero: func(r *supervisor.Result) { r.Receipts[0].RequestSHA256 = "sha256:other" },
			matched: len(fieldOrder) - 1, differ: 1, problemsContaining: []string{"receipts differs"}},
		{name: "approval present on one side only", wazero: func(r *supervisor.Result) { r.Receipts[0].ApprovalRequestID = "" },
			matched: len(fieldOrder) - 1, differ: 1, problemsContaining: []string{"receipts differs"}},
		{name: "the workspace tree differs", wazero: func(r *supervisor.Result) { r.Workspace.FinalTreeSHA256 = "sha256:other" },
			matched: len(fieldOrder) - 1, differ: 1, problemsContaining: []string{"workspace differs"}},
		{name: "a documented difference holds",
			tc:      corpusCase{known: map[string]pinned{"stdout": {native: "hello\n", wazero: "hullo\n"}}},
			wazero:  func(r *supervisor.Result) { r.Stdout = "hullo\n" },
			matched: len(fieldOrder) - 1, documented: []string{"stdout"}},
		{name: "a documented difference changed",
			tc:      corpusCase{known: map[string]pinned{"stdout": {native: "hello\n", wazero: "hullo\n"}}},
			matched: len(fieldOrder) - 1, differ: 1, problemsContaining: []string{"documented difference changed"}},
		{name: "a documented field that does not exist", tc: corpusCase{known: map[string]pinned{"stdoot": {}}},
			matched: len(fieldOrder), problemsContaining: []string{`unknown field "stdoot"`}},
		{name: "both end otherwise than the case says", tc: corpusCase{status: sandbox.StatusError, exit: 1},
			matched: len(fieldOrder), problemsContaining: []string{"native: status ok", "wazero: status ok", "native: exit code 0, want 1"}},
		{name: "another Plan", native: func(r *supervisor.Result) { r.PlanSHA256 = "sha256:other" },
			matched: len(fieldOrder), problemsContaining: []string{"native: result binds plan sha256:other"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.tc.script = "case.py"
			v := compare(c.tc, planID, result("native", "run-n", c.native), result("wazero", "run-w", c.wazero))
			if len(v.matched) != c.matched || len(v.differ) != c.differ || strings.Join(v.documented, ",") != strings.Join(c.documented, ",") {
				t.Errorf("matched %v differ %v documented %v", v.matched, v.differ, v.documented)
			}
			all := strings.Join(v.problems, "\n")
			for _, want := range c.problemsContaining {
				if !strings.Contains(all, want) {
					t.Errorf("no problem mentions %q; problems:\n%s", want, all)
				}
			}
			if len(c.problemsContaining) == 0 && len(v.problems) > 0 {
				t.Errorf("unexpected problems:\n%s", all)
			}
		})
	}
}

// TestCorpusComplete holds the table and the directory together: every
// case names a script that exists, ids are unique, and every script of
// corpus/ is run by some test.
func TestCorpusComplete(t *testing.T) {
	ps, err := plans()
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{"hash_seed.py": true} // TestStrHashSeed
	ids := map[string]bool{}
	for _, tc := range corpus {
		if ids[tc.id()] {
			t.Errorf("case %s twice", tc.id())
		}
		ids[tc.id()] = true
		used[tc.script] = true
		if _, err := os.Stat(filepath.Join(corpusDir, tc.script)); err != nil {
			t.Errorf("case %s: %v", tc.id(), err)
		}
		if ps[tc.planName()] == nil {
			t.Errorf("case %s: no plan %q", tc.id(), tc.planName())
		}
	}
	scripts, err := filepath.Glob(filepath.Join(corpusDir, "*.py"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scripts {
		if !used[filepath.Base(s)] {
			t.Errorf("%s is run by no test", s)
		}
	}
}
