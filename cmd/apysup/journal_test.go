package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunUnderIdempotencyKey: the first run under a key runs; the second
// returns the recorded result without running anything (the script
// appends to a file in the workspace, which stays empty); another script
// under the key is refused (126); the journal shows and verifies.
func TestRunUnderIdempotencyKey(t *testing.T) {
	needNative(t)
	state := filepath.Join(t.TempDir(), "state")
	s := script(t, "import weather\nprint(weather.get(city='Oslo'))\n")
	args := []string{"--plan", "../../examples/plan.json", "--idempotency-key", "job-7", "--state", state, s}
	first, code, _ := runJSON(t, args...)
	if code != 0 || first.Idempotency == nil || first.Idempotency.Attempt != 1 || first.Idempotency.Replayed || len(first.Receipts) != 1 {
		t.Fatalf("first: exit %d %+v", code, first)
	}
	again, code, _ := runJSON(t, args...)
	if code != 0 || again.Idempotency == nil || !again.Idempotency.Replayed || again.RunID != first.RunID ||
		again.Stdout != first.Stdout || again.Receipts[0].ReceiptID != first.Receipts[0].ReceiptID {
		t.Fatalf("again: exit %d %+v", code, again)
	}
	other := script(t, "print('other')\n")
	conflict, code, _ := runJSON(t, "--plan", "../../examples/plan.json", "--idempotency-key", "job-7", "--state", state, other)
	if code != ExitRefused || conflict.Status != "refused" || conflict.ErrorCode != "idempotency_key_conflict" {
		t.Fatalf("another script: exit %d %+v", code, conflict)
	}

	out, _, code := run(t, "journal", "show", "--json", "--state", state)
	var shown struct {
		SchemaVersion string       `json:"schema_version"`
		Runs          []journalRun `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil || code != 0 || shown.SchemaVersion != "apysup.journal_show.v1" ||
		len(shown.Runs) != 1 || shown.Runs[0].State != "completed" || len(shown.Runs[0].Calls) != 1 || shown.Runs[0].Calls[0].Answer != "completed" {
		t.Fatalf("journal show: exit %d %v %s", code, err, out)
	}
	if out, _, code := run(t, "journal", "verify", "--state", state); code != 0 || !strings.Contains(out, "intact") {
		t.Fatalf("journal verify: exit %d %s", code, out)
	}
	if out, _, code := run(t, "journal", "compact", "--state", state, "--older-than", "0s"); code != 0 || !strings.Contains(out, "compacted 1 runs") {
		t.Fatalf("journal compact: exit %d %s", code, out)
	}
	compacted, code, _ := runJSON(t, args...)
	if code != ExitRefused || compacted.ErrorCode != "idempotency_key_compacted" {
		t.Fatalf("a compacted key: exit %d %+v", code, compacted)
	}
}

// TestIdempotencyUsage: a key without a state directory, or the reverse,
// or a malformed key, is a usage error; an unusable state directory
// refuses the run with journal_unavailable.
func TestIdempotencyUsage(t *testing.T) {
	s := script(t, "pass\n")
	state := filepath.Join(t.TempDir(), "s")
	for _, args := range [][]string{
		{"run", "--idempotency-key", "k", s},
		{"run", "--state", state, s},
		{"run", "--idempotency-key", "bad key", "--state", state, s},
		{"journal", "show"},
	} {
		if _, _, code := run(t, args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, ExitUsage)
		}
	}
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	res, code, _ := runJSON(t, "--idempotency-key", "k", "--state", file, s)
	if code != ExitRefused || res.Status != "refused" || res.ErrorCode != "journal_unavailable" {
		t.Fatalf("a state directory that is a file: exit %d %+v", code, res)
	}
}
