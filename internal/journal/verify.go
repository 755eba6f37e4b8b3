package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/canonjson"
)

// Problem codes of Verify.
const (
	ProblemChain      = "journal_chain_broken"   // an entry removed, reordered or inserted
	ProblemEntry      = "journal_entry_altered"  // an entry's digest does not recompute
	ProblemEpoch      = "journal_epoch_mismatch" // the last entry is not the epoch file's
	ProblemState      = "journal_state_mismatch" // a run or call record disagrees with the log
	ProblemPayload    = "journal_payload_altered"
	ProblemReceipt    = "journal_receipt_invalid"
	ProblemUnreadable = "journal_unreadable"
)

// Problem is one finding of Verify.
type Problem struct {
	Code    string `json:"code"`
	Seq     int64  `json:"seq,omitempty"`
	RunKey  string `json:"run_key,omitempty"`
	CallID  string `json:"call_id,omitempty"`
	Message string `json:"message"`
}

// Verify recomputes the journal: the hash chain of the log from its first
// entry to the epoch file's head, the run and call records from a replay
// of the log, every stored payload against the digest the log binds, and
// every receipt (its id recomputes, it names the call's request). It
// returns every problem found; none means the journal is intact.
func (j *Journal) Verify(ctx context.Context) []Problem {
	j.mu.Lock()
	defer j.mu.Unlock()
	// Not between another process's commit and its epoch write.
	if err := j.flock(); err != nil {
		return []Problem{{Code: ProblemUnreadable, Message: err.Error()}}
	}
	defer j.unflock()
	var problems []Problem
	add := func(p Problem) { problems = append(problems, p) }
	if damage := integrity(j.db); damage != "" {
		add(Problem{Code: ProblemUnreadable, Message: "the database is damaged (SQLite's integrity_check: " + damage + ")"})
	}

	type callWant struct {
		request, state, approvalID, approvalState, outcome, errorCode, receiptID, response string
		binding, projection                                                                string // payload digests ("" for none)
		notAfter                                                                           int64
	}
	type runWant struct {
		plan, request, state, status, result string
		attempts                             int
	}
	runs := map[string]*runWant{}
	calls := map[[2]string]*callWant{}

	rows, err := j.db.QueryContext(ctx, `SELECT seq, prev, kind, run_key, call_id, body, digest FROM log ORDER BY seq`)
	if err != nil {
		return []Problem{{Code: ProblemUnreadable, Message: err.Error()}}
	}
	var wantSeq int64 = 1
	prevDigest := ""
	for rows.Next() {
		var seq int64
		var prev, kind, key, callID, body, digest string
		if err := rows.Scan(&seq, &prev, &kind, &key, &callID, &body, &digest); err != nil {
			rows.Close()
			return append(problems, Problem{Code: ProblemUnreadable, Message: err.Error()})
		}
		if seq != wantSeq || prev != prevDigest {
			add(Problem{Code: ProblemChain, Seq: seq, Message: fmt.Sprintf("entry %d does not follow entry %d", seq, wantSeq-1)})
		}
		if entryDigest(seq, prev, kind, key, callID, []byte(body)) != digest {
			add(Problem{Code: ProblemEntry, Seq: seq, RunKey: key, CallID: callID, Message: "the entry's digest does not recompute"})
		}
		wantSeq, prevDigest = seq+1, digest
		var b map[string]any
		if err := json.Unmarshal([]byte(body), &b); err != nil {
			add(Problem{Code: ProblemEntry, Seq: seq, Message: "the entry's body is not JSON"})
			continue
		}
		str := func(k string) string { s, _ := b[k].(string); return s }
		c := calls[[2]string{key, callID}]
		switch kind {
		case KindRunBegun:
			n, _ := b["attempt"].(float64)
			r := runs[key]
			if r == nil {
				r = &runWant{}
				runs[key] = r
			}
			*r = runWant{plan: str("plan_sha256"), request: str("request_sha256"), state: RunRunning, attempts: int(n)}
		case KindRunEnded:
			if r := runs[key]; r != nil {
				r.status, r.result = str("status"), str("result_sha256")
				r.state = RunIncomplete
				if f, _ := b["final"].(bool); f {
					r.state = RunCompleted
				}
			}
		case KindCompacted:
			keys, _ := b["runs"].([]any)
			for _, k := range keys {
				if r := runs[fmt.Sprint(k)]; r != nil {
					r.state = RunCompacted
				}
			}
		case KindCallIntent:
			calls[[2]string{key, callID}] = &callWant{request: str("request_sha256"), state: CallIntent}
		case KindApprovalAwaited:
			if c != nil {
				c.state, c.approvalID = CallAwaiting, str("approval_id")
			}
		case KindApprovalDecided:
			if c != nil {
				n, _ := b["not_after"].(float64)
				c.state, c.approvalID, c.approvalState, c.notAfter = CallDecided, str("approval_id"), str("state"), int64(n)
			}
		case KindDispatchBegun:
			if c != nil {
				c.state, c.binding = CallDispatching, str("binding_sha256")
			}
		case KindCallCompleted:
			if c != nil {
				c.state, c.outcome, c.errorCode, c.receiptID, c.response = CallCompleted, str("outcome"), str("error_code"), str("receipt_id"), str("response_sha256")
				c.projection = str("projection_sha256")
			}
		default:
			add(Problem{Code: ProblemEntry, Seq: seq, Message: "unknown entry kind " + kind})
		}
	}
	rows.Close()
	if raw, err := os.ReadFile(filepath.Join(j.dir, epochName)); err != nil {
		add(Problem{Code: ProblemEpoch, Message: "the epoch file cannot be read"})
	} else {
		var ep epochDoc
		if err := json.Unmarshal(raw, &ep); err != nil || ep.Seq != wantSeq-1 || ep.Head != prevDigest || ep.JournalID != j.id {
			add(Problem{Code: ProblemEpoch, Message: fmt.Sprintf("the log ends at entry %d, the epoch file at entry %d", wantSeq-1, ep.Seq)})
		}
	}

	// The state tables, against the replay.
	runRows, err := j.db.QueryContext(ctx, `SELECT key, plan_sha256, request_sha256, state, attempts, status, result, result_sha256 FROM runs`)
	if err != nil {
		return append(problems, Problem{Code: ProblemUnreadable, Message: err.Error()})
	}
	seenRuns := map[string]bool{}
	for runRows.Next() {
		var key, plan, request, state, status, digest string
		var attempts int
		var result []byte
		if err := runRows.Scan(&key, &plan, &request, &state, &attempts, &status, &result, &digest); err != nil {
			runRows.Close()
			return append(problems, Problem{Code: ProblemUnreadable, Message: err.Error()})
		}
		seenRuns[key] = true
		w := runs[key]
		if w == nil || w.plan != plan || w.request != request || w.state != state || w.attempts != attempts || w.status != status || w.result != digest {
			add(Problem{Code: ProblemState, RunKey: key, Message: "the run record disagrees with the log"})
			continue
		}
		if state == RunCompleted && canonjson.PlainDigest(result) != digest {
			add(Problem{Code: ProblemPayload, RunKey: key, Message: "the recorded RunResult does not match its digest"})
		}
	}
	runRows.Close()
	for key := range runs {
		if !seenRuns[key] {
			add(Problem{Code: ProblemState, RunKey: key, Message: "a run of the log has no record"})
		}
	}

	callRows, err := j.db.QueryContext(ctx, `SELECT run_key, call_id, request_sha256, state, approval_id, approval_state, approval_not_after, outcome, error_code, response, response_sha256, receipt, receipt_id, binding, projection FROM calls`)
	if err != nil {
		return append(problems, Problem{Code: ProblemUnreadable, Message: err.Error()})
	}
	defer callRows.Close()
	seenCalls := map[[2]string]bool{}
	for callRows.Next() {
		var c Call
		if err := callRows.Scan(&c.RunKey, &c.CallID, &c.RequestSHA256, &c.State, &c.ApprovalID, &c.ApprovalState, &c.NotAfter, &c.Outcome, &c.ErrorCode, &c.Response, &c.ResponseSHA256, &c.Receipt, &c.ReceiptID, &c.Binding, &c.Projection); err != nil {
			return append(problems, Problem{Code: ProblemUnreadable, Message: err.Error()})
		}
		id := [2]string{c.RunKey, c.CallID}
		seenCalls[id] = true
		w := calls[id]
		if w == nil || w.request != c.RequestSHA256 || w.state != c.State || w.approvalID != c.ApprovalID || w.approvalState != c.ApprovalState || w.notAfter != c.NotAfter ||
			w.outcome != c.Outcome || w.errorCode != c.ErrorCode || w.receiptID != c.ReceiptID || w.response != c.ResponseSHA256 {
			add(Problem{Code: ProblemState, RunKey: c.RunKey, CallID: c.CallID, Message: "the call record disagrees with the log"})
			continue
		}
		compacted := runs[c.RunKey] != nil && runs[c.RunKey].state == RunCompacted
		if !compacted && (payloadDigest(c.Binding) != w.binding || payloadDigest(c.Projection) != w.projection) {
			add(Problem{Code: ProblemPayload, RunKey: c.RunKey, CallID: c.CallID, Message: "the recorded binding or provider projection does not match its digest"})
		}
		if c.State != CallCompleted {
			continue
		}
		if !compacted && canonjson.PlainDigest(c.Response) != c.ResponseSHA256 {
			add(Problem{Code: ProblemPayload, RunKey: c.RunKey, CallID: c.CallID, Message: "the recorded response does not match its digest"})
		}
		if c.Receipt != nil {
			if p := checkReceipt(c); p != "" {
				add(Problem{Code: ProblemReceipt, RunKey: c.RunKey, CallID: c.CallID, Message: p})
			}
		}
	}
	for id := range calls {
		if !seenCalls[id] {
			add(Problem{Code: ProblemState, RunKey: id[0], CallID: id[1], Message: "a call of the log has no record"})
		}
	}
	return problems
}

// checkReceipt recomputes a stored receipt and checks it names its call.
func checkReceipt(c Call) string {
	r, err := broker.DecodeReceipt(c.Receipt)
	if err != nil {
		return "the receipt is malformed"
	}
	// One receipt alone: its operation index is its place in its run.
	var ve *broker.VerifyError
	if err := broker.VerifyReceipts(r.PlanSHA256, r.RunID, []json.RawMessage{c.Receipt}); errors.As(err, &ve) {
		for _, p := range ve.Problems {
			if p.Code != broker.CodeReceiptOrder {
				return "the receipt does not recompute (" + p.Code + ")"
			}
		}
	}
	if r.ReceiptID != c.ReceiptID || r.CallID != c.CallID || r.RequestSHA256 != c.RequestSHA256 || r.Outcome != c.Outcome {
		return "the receipt names another call, request or outcome"
	}
	return ""
}

// Compact drops the payloads of runs that completed before the horizon:
// their RunResults, responses and receipts. What stays is a tombstone per
// call (run key, call id, request digest, outcome, error code, receipt id)
// and per run (key, fingerprint, status): a different request under a
// tombstoned call id is still refused, a completed call still answers its
// outcome, and the log's chain is untouched. It returns the number of runs
// compacted.
func (j *Journal) Compact(ctx context.Context, endedBeforeMillis int64) (int, error) {
	rows, err := j.db.QueryContext(ctx, `SELECT key FROM runs WHERE state = ? AND ended_at < ? ORDER BY first_seq`, RunCompleted, endedBeforeMillis)
	if err != nil {
		return 0, fail(CodeUnavailable, "cannot read the journal", err)
	}
	var keys []any
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			rows.Close()
			return 0, fail(CodeUnavailable, "cannot read the journal", err)
		}
		keys = append(keys, k)
	}
	rows.Close()
	if len(keys) == 0 {
		return 0, nil
	}
	err = j.commit(ctx, entry{kind: KindCompacted, body: map[string]any{"runs": keys}}, func(tx *sql.Tx, seq int64) error {
		for _, k := range keys {
			if _, err := tx.Exec(`UPDATE runs SET state = ?, result = NULL WHERE key = ? AND state = ?`, RunCompacted, k, RunCompleted); err != nil {
				return dbErr(err)
			}
			if _, err := tx.Exec(`UPDATE calls SET response = NULL, receipt = NULL, binding = NULL, projection = NULL WHERE run_key = ?`, k); err != nil {
				return dbErr(err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return len(keys), nil
}
