package supervisor

import (
	"encoding/json"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/sandbox"
)

// Result is the RunResult of SPEC.md section 10, printed by `apysup run --json`.
type Result struct {
	RunID           string                    `json:"run_id"`
	Backend         string                    `json:"backend"`
	BackendSource   string                    `json:"backend_source"`
	PlanSHA256      string                    `json:"plan_sha256"`
	Status          sandbox.Status            `json:"status"`
	ExitCode        int                       `json:"exit_code"`
	Stdout          string                    `json:"stdout"`
	Stderr          string                    `json:"stderr"`
	StdoutTruncated bool                      `json:"stdout_truncated"`
	StderrTruncated bool                      `json:"stderr_truncated"`
	Result          json.RawMessage           `json:"result,omitempty"`
	GuestError      *GuestError               `json:"guest_error,omitempty"`
	Receipts        []broker.Receipt          `json:"receipts"`
	Workspace       *sandbox.WorkspaceReceipt `json:"workspace_receipt,omitempty"`
	ErrorCode       string                    `json:"error_code,omitempty"`
	Error           string                    `json:"error,omitempty"`
	Limits          []Selected                `json:"limits,omitempty"`
	Choices         []Selected                `json:"choices,omitempty"`
	Idempotency     *Idempotency              `json:"idempotency,omitempty"`
	// Events is the run's hash-chained ledger (broker.Event), EventsHead
	// the digest of its last event; EventsMissed counts the events that
	// observers missed (their queue was full).
	Events       []broker.Event `json:"events"`
	EventsHead   string         `json:"events_head"`
	EventsMissed int            `json:"events_missed,omitempty"`
	Timings      Timings        `json:"timings"`
	Usage        sandbox.Usage  `json:"usage"`
}

// GuestError is the script's uncaught exception, as the runner reported it.
type GuestError struct {
	Type      string `json:"type"`
	Message   string `json:"message"`
	Traceback string `json:"traceback"`
}

// Timings are the phases of a run in milliseconds.
type Timings struct {
	TotalMs   float64 `json:"total_ms"`
	PrepareMs float64 `json:"prepare_ms"`
	StartMs   float64 `json:"start_ms"`
	RunMs     float64 `json:"run_ms"`
	DestroyMs float64 `json:"destroy_ms"`
}

// Selected is one user-selectable value and where it came from
// (flag, env, config or default).
type Selected struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// PoolState is the native pool's state: its configured Size, the
// sandboxes Ready now and the limits Classes kept, and the counts of
// sandboxes started and seen ready (Started), of runs that took a pooled
// sandbox (Taken) or found none that fit (Cold), and of pooled sandboxes
// found dead (Discarded) or destroyed unused after the idle time
// (Expired). Error is the filler's last failure.
type PoolState struct {
	Size      int    `json:"size"`
	Ready     int    `json:"ready"`
	Classes   int    `json:"classes"`
	Started   int64  `json:"started"`
	Taken     int64  `json:"taken"`
	Cold      int64  `json:"cold"`
	Discarded int64  `json:"discarded"`
	Expired   int64  `json:"expired"`
	Error     string `json:"error,omitempty"`
}

// WazeroPoolState is the wazero pool's state (Config.WazeroPool): its
// size, the children loaded and waiting now, and counts since the
// interpreter loaded of those that loaded, that runs took, the runs that
// found none ready, those that died while idle, and those killed idle.
type WazeroPoolState struct {
	Size      int `json:"size"`
	Ready     int `json:"ready"`
	Loaded    int `json:"loaded"`
	Taken     int `json:"taken"`
	Cold      int `json:"cold"`
	Discarded int `json:"discarded"`
	Expired   int `json:"expired"`
}
