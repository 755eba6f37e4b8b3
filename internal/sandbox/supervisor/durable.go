package supervisor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/internal/journal"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/plan"
)

// Idempotency is the RunResult's account of a run under an idempotency
// key: which attempt this was, and whether the result is a completed
// attempt's, returned without running anything.
type Idempotency struct {
	Key      string `json:"key"`
	Attempt  int    `json:"attempt"`
	Replayed bool   `json:"replayed,omitempty"`
}

// finalStatuses are the endings running again must return rather than
// retry: the guest's own, or a limit it met. killed, refused and
// setup_failed are retried by running again.
var finalStatuses = map[sandbox.Status]bool{
	sandbox.StatusOK: true, sandbox.StatusError: true, sandbox.StatusTimeout: true, sandbox.StatusMemoryLimit: true,
}

// KeyedRunID is the run id of every attempt under key: receipts of calls
// replayed from an earlier attempt name the same run.
func KeyedRunID(key string) string {
	sum := sha256.Sum256([]byte("apysup.run_id.v1\x00" + key))
	return "run-k" + hex.EncodeToString(sum[:12])
}

// fingerprint is what makes another run under the same key the same run:
// the Plan, the script's bytes, its arguments, the backend and the
// surface. Limits, the workspace and approvals are not part of it: a
// retry may be given more time.
func fingerprint(req Request) (journal.Fingerprint, error) {
	script, err := sandbox.Job{ScriptPath: req.ScriptPath, Source: req.Source}.ReadScript()
	if err != nil {
		return journal.Fingerprint{}, err
	}
	args := req.Args
	if args == nil {
		args = []string{}
	}
	digest, err := canonjson.DigestOf(canonjson.DomainRunRequest, map[string]any{
		"script_sha256": canonjson.PlainDigest(script), "args": args,
		"backend": req.Backend, "surface": string(req.Surface), "parent": req.Parent,
	})
	if err != nil {
		return journal.Fingerprint{}, err
	}
	return journal.Fingerprint{PlanSHA256: req.Plan.Identity(), RequestSHA256: digest}, nil
}

// beginKeyed starts the attempt of a run under req.IdempotencyKey. It
// returns the recorded result of a completed run (nothing is to run), or
// the CallJournal of this attempt, or a refusal code.
func beginKeyed(ctx context.Context, req Request, res *Result) (recorded *Result, cj broker.CallJournal, code string, err error) {
	fp, err := fingerprint(req)
	if err != nil {
		return nil, nil, sandbox.CodeInvalidJob, err
	}
	run, err := req.Journal.BeginRun(ctx, req.IdempotencyKey, fp, journal.Owner())
	if err != nil {
		return nil, nil, journalCode(err), err
	}
	if run.State == journal.RunCompleted {
		var prior Result
		if err := json.Unmarshal(run.Result, &prior); err != nil {
			return nil, nil, journal.CodeCorrupt, err
		}
		prior.Idempotency = &Idempotency{Key: req.IdempotencyKey, Attempt: run.Attempts, Replayed: true}
		return &prior, nil, "", nil
	}
	res.Idempotency = &Idempotency{Key: req.IdempotencyKey, Attempt: run.Attempts}
	return nil, req.Journal.ForRun(req.IdempotencyKey), "", nil
}

// endKeyed records how the attempt ended; a completed run's result is
// what running again returns. A failure to record it leaves the run
// retriable, which is safe: its calls are in the journal.
func endKeyed(req Request, res *Result) {
	final := finalStatuses[res.Status]
	var doc []byte
	if final {
		var err error
		if doc, err = json.Marshal(res); err != nil {
			final = false
		}
	}
	_ = req.Journal.EndRun(context.Background(), req.IdempotencyKey, string(res.Status), final, doc)
}

func journalCode(err error) string {
	if code := plan.CodeOf(err); code != "" {
		return code
	}
	return journal.CodeUnavailable
}
