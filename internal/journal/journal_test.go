package journal

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/internal/testenv"
	"github.com/apysup/apysup/plan"
)

var (
	ctx = context.Background()
	fp  = Fingerprint{PlanSHA256: canonjson.Digest("test", []byte("plan")), RequestSHA256: canonjson.Digest("test", []byte("script"))}
	// deadOwner is a process that cannot exist: its run is abandoned.
	deadOwner = "pid:2147483646:0"
)

func reqDigest(n int) string { return canonjson.Digest("test", []byte("request "+strconv.Itoa(n))) }

func open(t *testing.T, dir string) *Journal {
	t.Helper()
	j, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

func codeOf(err error) string {
	var je *Error
	if errors.As(err, &je) {
		return je.Code
	}
	return ""
}

// realCall runs one echo call through a real Broker and returns what the
// journal would record: the response and the receipt.
func realCall(t *testing.T, runID string, n int) (Completion, string) {
	t.Helper()
	r, _ := plan.NewRegistry(16)
	if err := r.Register(plan.Spec{Name: "echo", Version: "1", Effect: plan.EffectRead, Playback: plan.PlaybackLive, Handler: broker.EchoIdentity(),
		InputSchema: json.RawMessage(`{"type":"object"}`)}); err != nil {
		t.Fatal(err)
	}
	g, _ := plan.NewGrant(json.RawMessage(`{}`))
	_ = r.Bind("echo", g)
	p, err := r.Seal()
	if err != nil {
		t.Fatal(err)
	}
	hs := broker.NewHandlers()
	_ = hs.Add(broker.EchoIdentity(), broker.Echo{})
	b, err := broker.New(broker.Config{Plan: p, RunID: runID, Surface: plan.SurfaceDirect, Handlers: hs})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	resp := b.Call(ctx, []byte(`{"call_id":"capability-`+strconv.Itoa(n)+`","capability":"echo","arguments":{"n":`+strconv.Itoa(n)+`}}`)).AppendJSON(nil)
	rs := b.Receipts()
	if len(rs) != 1 {
		t.Fatalf("%d receipts", len(rs))
	}
	raw := broker.MarshalReceipts(rs)[0]
	return Completion{Outcome: rs[0].Outcome, Response: resp, Receipt: raw, ReceiptID: rs[0].ReceiptID}, rs[0].RequestSHA256
}

// TestRunAndCallLifecycle walks every boundary of one call and one run,
// reopens the journal, and checks what a second run under the key gets.
func TestRunAndCallLifecycle(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir)
	run, err := j.BeginRun(ctx, "key-1", fp, Owner())
	if err != nil || run.State != RunRunning || run.Attempts != 1 {
		t.Fatalf("BeginRun: %+v %v", run, err)
	}
	done, request := realCall(t, "run_1", 1)
	c, _, err := j.Intent(ctx, "key-1", "capability-1", request)
	if err != nil || c.State != CallIntent || c.Answer() != Absent {
		t.Fatalf("Intent: %+v %v", c, err)
	}
	if err := j.AwaitApproval(ctx, "key-1", "capability-1", "apr_1"); err != nil {
		t.Fatal(err)
	}
	if err := j.Decide(ctx, "key-1", "capability-1", "apr_1", "approved", 0); err != nil {
		t.Fatal(err)
	}
	if err := j.BeginDispatch(ctx, "key-1", "capability-1", nil); err != nil {
		t.Fatal(err)
	}
	if c, _ := j.Call(ctx, "key-1", "capability-1"); c.Answer() != Unknown {
		t.Fatalf("after BeginDispatch: %s", c.Answer())
	}
	if err := j.Complete(ctx, "key-1", "capability-1", done); err != nil {
		t.Fatal(err)
	}
	if err := j.Complete(ctx, "key-1", "capability-1", done); codeOf(err) != CodeInvalid {
		t.Fatalf("second Complete: %v", err)
	}
	result := []byte(`{"status":"ok"}`)
	if err := j.EndRun(ctx, "key-1", "ok", true, result); err != nil {
		t.Fatal(err)
	}
	j.Close()

	j = open(t, dir)
	again, err := j.BeginRun(ctx, "key-1", fp, Owner())
	if err != nil || again.State != RunCompleted || string(again.Result) != string(result) {
		t.Fatalf("a completed key: %+v %v", again, err)
	}
	other := Fingerprint{PlanSHA256: fp.PlanSHA256, RequestSHA256: reqDigest(9)}
	if _, err := j.BeginRun(ctx, "key-1", other, Owner()); codeOf(err) != CodeKeyConflict {
		t.Fatalf("another script under the key: %v", err)
	}
	c, err = j.Call(ctx, "key-1", "capability-1")
	if err != nil || c.Answer() != Completed || string(c.Response) != string(done.Response) || c.ReceiptID != done.ReceiptID || c.ApprovalState != "approved" {
		t.Fatalf("the completed call: %+v %v", c, err)
	}
	if p := j.Verify(ctx); len(p) != 0 {
		t.Fatalf("Verify: %+v", p)
	}
}

// TestResumeAfterCrash: a run whose owner died resumes as attempt 2, and
// each call meets its record: a call that never reached dispatch is
// absent (dispatched as usual, with a recorded decision kept), one whose
// dispatch began is unknown, and a call id with another request is a
// mismatch.
func TestResumeAfterCrash(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir)
	if _, err := j.BeginRun(ctx, "k", fp, deadOwner); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 3; n++ {
		if _, _, err := j.Intent(ctx, "k", "capability-"+strconv.Itoa(n), reqDigest(n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Decide(ctx, "k", "capability-2", "apr_2", "approved", 0); err != nil {
		t.Fatal(err)
	}
	if err := j.BeginDispatch(ctx, "k", "capability-3", nil); err != nil {
		t.Fatal(err)
	}
	j.Close() // the supervisor dies here

	j = open(t, dir)
	run, err := j.BeginRun(ctx, "k", fp, Owner())
	if err != nil || run.Attempts != 2 || run.State != RunRunning {
		t.Fatalf("resume: %+v %v", run, err)
	}
	c1, _, _ := j.Intent(ctx, "k", "capability-1", reqDigest(1))
	c2, _, _ := j.Intent(ctx, "k", "capability-2", reqDigest(2))
	c3, _, _ := j.Intent(ctx, "k", "capability-3", reqDigest(3))
	if c1.Answer() != Absent || c2.Answer() != Absent || c2.ApprovalState != "approved" || c3.Answer() != Unknown {
		t.Fatalf("answers: %+v %+v %+v", c1, c2, c3)
	}
	if _, _, err := j.Intent(ctx, "k", "capability-1", reqDigest(7)); codeOf(err) != CodeCallIdentityMismatch {
		t.Fatalf("another request under a recorded id: %v", err)
	}
	if err := j.BeginDispatch(ctx, "k", "capability-3", nil); codeOf(err) != CodeInvalid {
		t.Fatalf("an unknown call dispatched again: %v", err)
	}
	if err := j.BeginDispatch(ctx, "k", "capability-1", nil); err != nil {
		t.Fatalf("an absent call: %v", err)
	}
	// A live owner holds its key.
	if _, err := j.BeginRun(ctx, "k", fp, Owner()); codeOf(err) != CodeRunActive {
		t.Fatalf("a key held by a live process: %v", err)
	}
	if p := j.Verify(ctx); len(p) != 0 {
		t.Fatalf("Verify: %+v", p)
	}
}

// TestIncompleteRunRetries: a run that ended without a final outcome
// (killed) runs again; one that completed does not.
func TestIncompleteRunRetries(t *testing.T) {
	j := open(t, t.TempDir())
	if _, err := j.BeginRun(ctx, "k", fp, Owner()); err != nil {
		t.Fatal(err)
	}
	if err := j.EndRun(ctx, "k", "killed", false, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	run, err := j.BeginRun(ctx, "k", fp, Owner())
	if err != nil || run.State != RunRunning || run.Attempts != 2 {
		t.Fatalf("after killed: %+v %v", run, err)
	}
}

// TestRolledBackDatabaseRefused: restoring an older copy of the database
// is detected by the epoch file and refused; so are a database without its
// epoch file, an epoch file without its database, and two halves of
// different journals.
func TestRolledBackDatabaseRefused(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir)
	if _, err := j.BeginRun(ctx, "k", fp, deadOwner); err != nil {
		t.Fatal(err)
	}
	j.Close()
	backup := t.TempDir()
	copyFiles(t, dir, backup, dbName)
	j = open(t, dir)
	if _, _, err := j.Intent(ctx, "k", "capability-1", reqDigest(1)); err != nil {
		t.Fatal(err)
	}
	j.Close()
	copyFiles(t, backup, dir, dbName) // the older copy comes back
	if _, err := Open(dir, Options{}); codeOf(err) != CodeRolledBack {
		t.Fatalf("an older database: %v", err)
	}

	other := t.TempDir()
	o := open(t, other)
	if _, err := o.BeginRun(ctx, "k", fp, deadOwner); err != nil {
		t.Fatal(err)
	}
	o.Close()
	copyFiles(t, other, dir, epochName)
	if _, err := Open(dir, Options{}); codeOf(err) != CodeForeign {
		t.Fatalf("another journal's epoch: %v", err)
	}
	os.Remove(filepath.Join(dir, epochName))
	if _, err := Open(dir, Options{}); codeOf(err) != CodeForeign {
		t.Fatalf("no epoch file: %v", err)
	}
	for _, f := range []string{dbName, dbName + "-wal", dbName + "-shm"} {
		os.Remove(filepath.Join(other, f))
	}
	if _, err := Open(other, Options{}); codeOf(err) != CodeForeign {
		t.Fatalf("no database behind an epoch file at entry 1: %v", err)
	}
}

// TestInterruptedCreationStartsOver: a process killed while it created a
// journal (the database made, its epoch file not yet written) leaves a
// database with no entry, which the next Open starts over; a database with
// entries and no epoch file is still refused.
func TestInterruptedCreationStartsOver(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir)
	j.Close()
	os.Remove(filepath.Join(dir, epochName))
	j = open(t, dir)
	if _, err := j.BeginRun(ctx, "k", fp, Owner()); err != nil {
		t.Fatal(err)
	}
	j.Close()
	os.Remove(filepath.Join(dir, epochName))
	if _, err := Open(dir, Options{}); codeOf(err) != CodeForeign {
		t.Fatalf("a database with entries and no epoch file: %v", err)
	}
}

// TestEpochWriteLostIsRepaired: a process that dies between a commit and
// its epoch write leaves the database one entry ahead, which Open accepts
// and repairs; two entries ahead is refused.
func TestEpochWriteLostIsRepaired(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir)
	if _, err := j.BeginRun(ctx, "k", fp, deadOwner); err != nil {
		t.Fatal(err)
	}
	epoch, _ := os.ReadFile(filepath.Join(dir, epochName))
	if _, _, err := j.Intent(ctx, "k", "capability-1", reqDigest(1)); err != nil {
		t.Fatal(err)
	}
	j.Close()
	os.WriteFile(filepath.Join(dir, epochName), epoch, 0o600)
	j = open(t, dir)
	if p := j.Verify(ctx); len(p) != 0 {
		t.Fatalf("Verify after the repair: %+v", p)
	}
	if _, _, err := j.Intent(ctx, "k", "capability-2", reqDigest(2)); err != nil {
		t.Fatal(err)
	}
	j.Close()
	os.WriteFile(filepath.Join(dir, epochName), epoch, 0o600)
	if _, err := Open(dir, Options{}); codeOf(err) != CodeForeign {
		t.Fatalf("a database two entries past its epoch: %v", err)
	}
}

func copyFiles(t *testing.T, from, to, base string) {
	t.Helper()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(filepath.Join(from, base+suffix))
		if errors.Is(err, os.ErrNotExist) {
			os.Remove(filepath.Join(to, base+suffix))
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, base+suffix), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestVerifyFindsTampering: every kind of change to the database is found.
func TestVerifyFindsTampering(t *testing.T) {
	cases := []struct {
		name, sql, want string
	}{
		{"call outcome", `UPDATE calls SET outcome = 'error'`, ProblemState},
		{"call state", `UPDATE calls SET state = 'intent'`, ProblemState},
		{"entry body", `UPDATE log SET body = '{"request_sha256":"x"}' WHERE kind = 'call_intent'`, ProblemEntry},
		{"entry removed", `DELETE FROM log WHERE kind = 'dispatch_begun'`, ProblemChain},
		{"response", `UPDATE calls SET response = CAST('{"status":"ok"}' AS BLOB)`, ProblemPayload},
		{"run result", `UPDATE runs SET result = CAST('{"status":"error"}' AS BLOB)`, ProblemPayload},
		{"receipt", `UPDATE calls SET receipt = CAST(replace(CAST(receipt AS TEXT), '"ok"', '"error"') AS BLOB)`, ProblemReceipt},
		{"run removed", `DELETE FROM runs`, ProblemState},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := open(t, t.TempDir())
			if _, err := j.BeginRun(ctx, "k", fp, Owner()); err != nil {
				t.Fatal(err)
			}
			done, request := realCall(t, "run_1", 1)
			_, _, _ = j.Intent(ctx, "k", "capability-1", request)
			j.BeginDispatch(ctx, "k", "capability-1", nil)
			if err := j.Complete(ctx, "k", "capability-1", done); err != nil {
				t.Fatal(err)
			}
			if err := j.EndRun(ctx, "k", "ok", true, []byte(`{"status":"ok"}`)); err != nil {
				t.Fatal(err)
			}
			if p := j.Verify(ctx); len(p) != 0 {
				t.Fatalf("before: %+v", p)
			}
			if _, err := j.db.Exec(tc.sql); err != nil {
				t.Fatal(err)
			}
			problems := j.Verify(ctx)
			found := false
			for _, p := range problems {
				found = found || p.Code == tc.want
			}
			if !found {
				t.Fatalf("want %s, got %+v", tc.want, problems)
			}
		})
	}
}

// TestCompactKeepsTombstones: a compacted run keeps refusing another
// request under its call ids and answers its calls' outcomes, without
// their payloads.
func TestCompactKeepsTombstones(t *testing.T) {
	j := open(t, t.TempDir())
	if _, err := j.BeginRun(ctx, "k", fp, Owner()); err != nil {
		t.Fatal(err)
	}
	done, request := realCall(t, "run_1", 1)
	_, _, _ = j.Intent(ctx, "k", "capability-1", request)
	j.BeginDispatch(ctx, "k", "capability-1", nil)
	j.Complete(ctx, "k", "capability-1", done)
	j.EndRun(ctx, "k", "ok", true, []byte(`{}`))
	if n, err := j.Compact(ctx, 0); n != 0 || err != nil {
		t.Fatalf("nothing is older than the horizon: %d %v", n, err)
	}
	if n, err := j.Compact(ctx, j.opts.Now().UnixMilli()+1); n != 1 || err != nil {
		t.Fatalf("Compact: %d %v", n, err)
	}
	c, err := j.Call(ctx, "k", "capability-1")
	if err != nil || c.Answer() != Completed || c.Outcome != "ok" || c.ReceiptID != done.ReceiptID || c.Response != nil || c.Receipt != nil {
		t.Fatalf("tombstone: %+v %v", c, err)
	}
	if _, _, err := j.Intent(ctx, "k", "capability-1", reqDigest(5)); codeOf(err) != CodeCallIdentityMismatch {
		t.Fatalf("another request under a tombstone: %v", err)
	}
	if _, err := j.BeginRun(ctx, "k", fp, Owner()); codeOf(err) != CodeKeyCompacted {
		t.Fatalf("a compacted key: %v", err)
	}
	if p := j.Verify(ctx); len(p) != 0 {
		t.Fatalf("Verify: %+v", p)
	}
}

// TestConcurrentCalls: many calls of one run recorded at once stay one
// chain.
func TestConcurrentCalls(t *testing.T) {
	j := open(t, t.TempDir())
	if _, err := j.BeginRun(ctx, "k", fp, Owner()); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for n := 1; n <= 16; n++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := "capability-" + strconv.Itoa(n)
			if _, _, err := j.Intent(ctx, "k", id, reqDigest(n)); err != nil {
				t.Error(err)
				return
			}
			if err := j.BeginDispatch(ctx, "k", id, nil); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	calls, err := j.Calls(ctx, "k")
	if err != nil || len(calls) != 16 {
		t.Fatalf("%d calls, %v", len(calls), err)
	}
	if p := j.Verify(ctx); len(p) != 0 {
		t.Fatalf("Verify: %+v", p)
	}
}

// TestInvalidArguments: malformed keys, ids and digests are refused
// before anything is written.
func TestInvalidArguments(t *testing.T) {
	j := open(t, t.TempDir())
	for _, key := range []string{"", "-x", "a b", string(make([]byte, 200)), "k\x00"} {
		if _, err := j.BeginRun(ctx, key, fp, Owner()); codeOf(err) != CodeInvalid {
			t.Errorf("key %q: %v", key, err)
		}
	}
	if _, err := j.BeginRun(ctx, "k", Fingerprint{PlanSHA256: "x", RequestSHA256: fp.RequestSHA256}, Owner()); codeOf(err) != CodeInvalid {
		t.Errorf("a bad fingerprint: %v", err)
	}
	if _, _, err := j.Intent(ctx, "nobody", "capability-1", reqDigest(1)); codeOf(err) != CodeInvalid {
		t.Errorf("an intent without a run: %v", err)
	}
	if j.seq != 0 {
		t.Errorf("%d entries written", j.seq)
	}
}

// TestFullDiskAndReadOnly: a full state directory refuses the write with
// CodeUnavailable and leaves the journal as it was; a read-only one
// refuses to open.
func TestFullDiskAndReadOnly(t *testing.T) {
	testenv.NeedRoot(t)
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", dir).CombinedOutput(); err != nil {
		testenv.Need(t, false, "a tmpfs mount: "+string(out))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	j, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.BeginRun(ctx, "k", fp, Owner()); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 64<<10)
	var werr error
	for n := 1; n < 100 && werr == nil; n++ {
		id := "capability-" + strconv.Itoa(n)
		if _, _, werr = j.Intent(ctx, "k", id, reqDigest(n)); werr == nil {
			werr = j.Complete(ctx, "k", id, Completion{Outcome: "ok", Response: big})
		}
	}
	if codeOf(werr) != CodeUnavailable {
		t.Fatalf("a full disk: %v", werr)
	}
	j.Close()
	j, err = Open(dir, Options{})
	if err != nil {
		t.Fatalf("reopen after a full disk: %v", err)
	}
	if p := j.Verify(ctx); len(p) != 0 {
		t.Fatalf("Verify after a full disk: %+v", p)
	}
	j.Close()
	if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
		t.Fatalf("remount ro: %v %s", err, out)
	}
	ro := filepath.Join(dir, "new")
	if _, err := Open(ro, Options{}); codeOf(err) != CodeUnavailable {
		t.Fatalf("a read-only state directory: %v", err)
	}
}

// TestInterruptedCreationAtEachStep: a creation killed at any step leaves
// what Open starts over from, never a journal it refuses: a half-built
// database under its temporary name, then the epoch file at entry 0
// without the renamed database. An epoch file past entry 0 without its
// database is still refused.
func TestInterruptedCreationAtEachStep(t *testing.T) {
	t.Run("temporary database", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, dbName+".new"), []byte("half a database"), 0o600); err != nil {
			t.Fatal(err)
		}
		j := open(t, dir)
		if _, err := j.BeginRun(ctx, "k", fp, Owner()); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, dbName+".new")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the temporary database is left: %v", err)
		}
	})
	t.Run("epoch at entry 0 without the database", func(t *testing.T) {
		dir := t.TempDir()
		j := open(t, dir)
		j.Close()
		if err := os.Rename(filepath.Join(dir, dbName), filepath.Join(dir, dbName+".new")); err != nil {
			t.Fatal(err)
		}
		j = open(t, dir)
		if _, err := j.BeginRun(ctx, "k", fp, Owner()); err != nil {
			t.Fatal(err)
		}
		if p := j.Verify(ctx); len(p) != 0 {
			t.Fatalf("Verify: %+v", p)
		}
	})
	t.Run("epoch past entry 0 without the database", func(t *testing.T) {
		dir := t.TempDir()
		j := open(t, dir)
		if _, err := j.BeginRun(ctx, "k", fp, Owner()); err != nil {
			t.Fatal(err)
		}
		j.Close()
		if err := removeDB(filepath.Join(dir, dbName)); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(dir, Options{}); codeOf(err) != CodeForeign {
			t.Fatalf("an epoch file at entry 1 and no database: %v", err)
		}
	})
}

// TestJournalsShareADirectory: two Journals on one directory (two
// processes with one --state) take turns: each commit continues the log
// whoever wrote last, the epoch file follows, and two attempts to begin
// one key at once give one run and one idempotency_key_in_use.
func TestJournalsShareADirectory(t *testing.T) {
	dir := t.TempDir()
	js := []*Journal{open(t, dir), open(t, dir)}
	var wg sync.WaitGroup
	for n := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j, key := js[n%2], "key-"+strconv.Itoa(n)
			if _, err := j.BeginRun(ctx, key, fp, Owner()); err != nil {
				t.Error(err)
				return
			}
			id := "capability-1"
			if _, _, err := j.Intent(ctx, key, id, reqDigest(n)); err != nil {
				t.Error(err)
				return
			}
			if err := j.EndRun(ctx, key, "ok", true, []byte(`{"status":"ok"}`)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for round := range 8 {
		key := "same-" + strconv.Itoa(round)
		errs := make([]error, 2)
		for i, j := range js {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = j.BeginRun(ctx, key, fp, Owner())
			}()
		}
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("two BeginRun of %s at once: %v and %v, want one run and one %s", key, errs[0], errs[1], CodeRunActive)
		}
		for _, err := range errs {
			if err != nil && codeOf(err) != CodeRunActive {
				t.Fatalf("the second BeginRun of %s: %v, want %s", key, err, CodeRunActive)
			}
		}
	}
	for _, j := range js {
		if p := j.Verify(ctx); len(p) != 0 {
			t.Fatalf("Verify: %+v", p)
		}
	}
	js[0].Close()
	js[1].Close()
	j := open(t, dir)
	if p := j.Verify(ctx); len(p) != 0 {
		t.Fatalf("Verify after reopening: %+v", p)
	}
}

// TestDamagedIndexRefused: a byte changed in the database's index pages
// (the runs' key index: the table still holds the run) made a lookup
// miss the run, so a completed key would run again, its calls dispatched
// twice, while the log's chain still verified. SQLite's integrity_check
// finds it: Open refuses the journal, and Verify reports it.
func TestDamagedIndexRefused(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir)
	for _, key := range []string{"key-one", "key-two"} {
		if _, err := j.BeginRun(ctx, key, fp, deadOwner); err != nil {
			t.Fatal(err)
		}
	}
	j.Close() // the last connection checkpoints the WAL into the database
	path := filepath.Join(dir, dbName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pageSize := int(binary.BigEndian.Uint16(b[16:18]))
	if pageSize == 1 {
		pageSize = 1 << 16
	}
	damaged := 0
	for start := 0; start+pageSize <= len(b); start += pageSize {
		header := start
		if start == 0 {
			header = 100 // the database header precedes page 1's
		}
		if b[header] != 0x0a { // a leaf page of an index b-tree
			continue
		}
		page := b[start : start+pageSize]
		for i := bytes.Index(page, []byte("key-two")); i >= 0; i = bytes.Index(page, []byte("key-two")) {
			page[i+6] = 'x'
			damaged++
		}
	}
	if damaged == 0 {
		t.Fatal("no index page holds the key")
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{}); codeOf(err) != CodeCorrupt {
		t.Fatalf("Open of a damaged database: %v, want %s", err, CodeCorrupt)
	}
}
