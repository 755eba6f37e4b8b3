package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEventsVerify: a run's ledger verifies against its receipts and Plan;
// an event removed, reordered or altered, or a result whose receipts were
// edited, is refused with exit status 1 and typed problems.
func TestEventsVerify(t *testing.T) {
	needNative(t)
	m := writeManifest(t, approvalManifest)
	s := script(t, notesScript+"import notes\ntry:\n    notes.put(text=3)\nexcept Exception as e:\n    print(type(e).__name__)\n")
	out, errOut, code := run(t, "run", "--json", "--plan", m, "--approve", "auto", s)
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	dir := t.TempDir()
	write := func(name string, doc map[string]any) string {
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	events := doc["events"].([]any)
	kinds := []string{}
	for _, e := range events {
		kinds = append(kinds, e.(map[string]any)["kind"].(string))
	}
	if strings.Join(kinds, ",") != "run_admitted,call_intent,call_admitted,approval_decided,call_dispatched,call_receipt,call_intent,call_admitted,call_receipt,workspace,run_ended" {
		t.Fatalf("events %v", kinds)
	}
	good := write("good.json", doc)
	for _, args := range [][]string{{"--plan", m, good}, {good, "--plan", m}} { // flags before or after RESULT
		if out, errOut, code := run(t, append([]string{"events", "verify"}, args...)...); code != 0 || !strings.HasPrefix(out, "ok: 11 events") {
			t.Fatalf("verify %v: exit %d %s %s", args, code, out, errOut)
		}
	}

	tampered := map[string]func(d map[string]any){
		"removed":   func(d map[string]any) { d["events"] = append(append([]any{}, events[:3]...), events[4:]...) },
		"reordered": func(d map[string]any) { e := append([]any{}, events...); e[3], e[4] = e[4], e[3]; d["events"] = e },
		"altered": func(d map[string]any) {
			var e []any
			b, _ := json.Marshal(events)
			_ = json.Unmarshal(b, &e)
			e[3].(map[string]any)["body"].(map[string]any)["state"] = "rejected"
			d["events"] = e
		},
		"receipt dropped":   func(d map[string]any) { d["receipts"] = d["receipts"].([]any)[:1] },
		"status changed":    func(d map[string]any) { d["status"] = "timeout" },
		"exit code changed": func(d map[string]any) { d["exit_code"] = 3 },
		"error code added":  func(d map[string]any) { d["error_code"] = "timeout" },
		"run id changed":    func(d map[string]any) { d["run_id"] = "run-other" },
		"receipt doubled":   func(d map[string]any) { r := d["receipts"].([]any); d["receipts"] = append(r, r[len(r)-1]) },
	}
	for name, change := range tampered {
		t.Run(name, func(t *testing.T) {
			var d map[string]any
			_ = json.Unmarshal([]byte(out), &d)
			change(d)
			p := write(strings.ReplaceAll(name, " ", "-")+".json", d)
			got, _, code := run(t, "events", "verify", "--json", "--plan", m, p)
			var report struct {
				OK       bool
				Problems []struct{ Code string }
			}
			if err := json.Unmarshal([]byte(got), &report); err != nil || code != 1 || report.OK || len(report.Problems) == 0 {
				t.Fatalf("exit %d: %s", code, got)
			}
		})
	}
}
