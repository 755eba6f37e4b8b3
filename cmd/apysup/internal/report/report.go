package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Exit statuses of `apysup run` when the guest's own status does not apply,
// chosen to mean what they mean to timeout(1) and docker (RATIONALE.md,
// "Exit statuses").
const (
	ExitTimeout     = 124 // timeout(1): the command timed out
	ExitSetupFailed = 125 // timeout(1), docker run: the tool itself failed
	ExitRefused     = 126 // timeout(1), docker run: the command cannot be invoked (as asked)
	ExitKilled      = 130 // a shell's 128+SIGINT: the caller interrupted the run
	ExitMemoryLimit = 137 // docker: an OOM kill (128+SIGKILL)
)

// Result is the part of the RunResult document (supervisor.Result) that
// the summary and the exit status read, by the same JSON names.
type Result struct {
	Status          string          `json:"status"`
	ExitCode        int             `json:"exit_code"`
	Backend         string          `json:"backend"`
	BackendSource   string          `json:"backend_source"`
	PlanSHA256      string          `json:"plan_sha256"`
	Stderr          string          `json:"stderr"`
	StdoutTruncated bool            `json:"stdout_truncated"`
	StderrTruncated bool            `json:"stderr_truncated"`
	Result          json.RawMessage `json:"result,omitempty"`
	GuestError      *GuestError     `json:"guest_error,omitempty"`
	Receipts        []Receipt       `json:"receipts"`
	Workspace       *Workspace      `json:"workspace_receipt,omitempty"`
	ErrorCode       string          `json:"error_code,omitempty"`
	Error           string          `json:"error,omitempty"`
	Choices         []Selected      `json:"choices,omitempty"`
	Idempotency     *Idempotency    `json:"idempotency,omitempty"`
	Timings         struct {
		TotalMs float64 `json:"total_ms"`
	} `json:"timings"`
	Usage struct {
		PeakMemoryBytes int64 `json:"peak_memory_bytes,omitempty"`
		CPUTimeNs       int64 `json:"cpu_time_ns,omitempty"`
	} `json:"usage"`
}

// GuestError is the script's uncaught exception.
type GuestError struct {
	Type      string `json:"type"`
	Message   string `json:"message"`
	Traceback string `json:"traceback"`
}

// Receipt is what the summary shows of a call's receipt (broker.Receipt).
type Receipt struct {
	ReceiptID         string `json:"receipt_id,omitempty"`
	CallID            string `json:"call_id"`
	ApprovalRequestID string `json:"approval_request_id,omitempty"`
	Capability        string `json:"capability"`
	Outcome           string `json:"outcome"`
	ErrorCode         string `json:"error_code,omitempty"`
}

// Workspace is what the summary shows of the workspace receipt.
type Workspace struct {
	Disposition string `json:"disposition"`
	ErrorCode   string `json:"error_code,omitempty"`
	EntryCount  int    `json:"entry_count"`
	Bytes       int64  `json:"bytes"`
}

// Selected is a selected value and its source (supervisor.Selected).
type Selected struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// Idempotency is a run's key and attempt (supervisor.Idempotency).
type Idempotency struct {
	Key      string `json:"key"`
	Attempt  int    `json:"attempt"`
	Replayed bool   `json:"replayed,omitempty"`
}

// FromJSON reads a RunResult document.
func FromJSON(data []byte) (*Result, error) {
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("the RunResult: %w", err)
	}
	return &r, nil
}

// ExitStatus is the script's own exit status for an error, except the
// statuses reserved for the host's verdicts: a script that exits 124 (or
// dies of SIGKILL, 137) must not pass for a timeout (or a kill) with a
// caller that reads only the exit status. Those become 1; the JSON result
// keeps the script's.
func ExitStatus(r *Result) int {
	switch r.Status {
	case "ok":
		return 0
	case "error":
		switch code := r.ExitCode; {
		case code == ExitRefused, code == ExitSetupFailed, code == ExitTimeout, code == ExitMemoryLimit, code == ExitKilled:
			return 1
		case code > 0 && code < 256:
			return code
		}
		return 1
	case "timeout":
		return ExitTimeout
	case "memory_limit":
		return ExitMemoryLimit
	case "killed":
		return ExitKilled
	case "refused":
		return ExitRefused
	}
	return ExitSetupFailed
}

// Summary is the readable default output, after the guest's own (streamed
// as it ran); export is the directory --export named. Everything the guest
// authored is shown escaped: a hostile script must not drive the user's
// terminal.
func Summary(w io.Writer, r *Result, export string) {
	if r.StdoutTruncated {
		fmt.Fprintln(w, "[stdout truncated]")
	}
	if r.StderrTruncated {
		fmt.Fprintln(w, "[stderr truncated]")
	}
	fmt.Fprintln(w, "──")
	status := r.Status
	if r.ErrorCode != "" {
		status += " (" + r.ErrorCode + ")"
	}
	fmt.Fprintf(w, "status    %s, exit %d, %.0f ms, backend %s (%s)\n", status, r.ExitCode, r.Timings.TotalMs, r.Backend, r.BackendSource)
	if k := r.Idempotency; k != nil {
		switch {
		case k.Replayed:
			fmt.Fprintf(w, "key       %s: the recorded result of attempt %d, which completed (nothing ran now)\n", k.Key, k.Attempt)
		case k.Attempt > 0:
			fmt.Fprintf(w, "key       %s, attempt %d\n", k.Key, k.Attempt)
		}
	}
	if r.Error != "" {
		fmt.Fprintf(w, "reason    %s\n", TerminalSafe(UserMessage(r.Error)))
	}
	if r.Usage.PeakMemoryBytes > 0 || r.Usage.CPUTimeNs > 0 {
		fmt.Fprintf(w, "usage     peak memory %.1f MiB, cpu %.0f ms\n", float64(r.Usage.PeakMemoryBytes)/(1<<20), float64(r.Usage.CPUTimeNs)/1e6)
	}
	if r.GuestError != nil {
		fmt.Fprintf(w, "exception %s: %s\n", TerminalSafe(r.GuestError.Type), TerminalSafe(Truncate(r.GuestError.Message, 300)))
		printTraceback(w, r)
	}
	if len(r.Result) > 0 {
		fmt.Fprintf(w, "result    %s\n", TerminalSafe(Truncate(string(r.Result), 200)))
	}
	fmt.Fprintf(w, "plan      %s\n", r.PlanSHA256)
	for _, rc := range r.Receipts {
		line := rc.Outcome
		if rc.ErrorCode != "" {
			line += " (" + rc.ErrorCode + ")"
		}
		if rc.ApprovalRequestID != "" {
			line += ", approval " + rc.ApprovalRequestID
		}
		fmt.Fprintf(w, "call      %-24s %-22s %-10s receipt %s\n", rc.CallID, rc.Capability, line, ShortDigest(rc.ReceiptID))
	}
	if n := deniedUnasked(r); n > 0 {
		fmt.Fprintf(w, "approval  %d call(s) needing approval were denied: nobody could be asked (no terminal, no --approve);\n"+
			"          choose with --approve auto|prompt|socket:PATH or APYSUP_APPROVE\n", n)
	}
	if ws := r.Workspace; ws != nil {
		where := "discarded"
		if ws.Disposition == "exported" {
			where = "exported to " + export
		} else if ws.ErrorCode != "" {
			where += " (" + ws.ErrorCode + ")"
		}
		fmt.Fprintf(w, "workspace %d entries, %d bytes, %s\n", ws.EntryCount, ws.Bytes, where)
	}
}

// tracebackLines bounds the traceback the summary shows (its last lines,
// where the exception is).
const tracebackLines = 40

// printTraceback shows the uncaught exception's traceback, unless the
// guest's stderr, shown whole above, holds it already (as it does when
// the script left sys.excepthook alone).
func printTraceback(w io.Writer, r *Result) {
	tb := strings.TrimRight(r.GuestError.Traceback, "\n")
	if tb == "" || (!r.StderrTruncated && strings.Contains(r.Stderr, tb)) {
		return
	}
	lines := strings.Split(tb, "\n")
	if len(lines) > tracebackLines {
		fmt.Fprintf(w, "traceback (last %d of %d lines)\n", tracebackLines, len(lines))
		lines = lines[len(lines)-tracebackLines:]
	} else {
		fmt.Fprintln(w, "traceback")
	}
	for _, l := range lines {
		fmt.Fprintf(w, "          %s\n", TerminalSafe(l))
	}
}

// deniedUnasked counts the calls the default approval mode denied because
// there was no terminal to ask on (the default is deny then).
func deniedUnasked(r *Result) int {
	defaultDeny := false
	for _, c := range r.Choices {
		defaultDeny = defaultDeny || (c.Name == "approve" && c.Value == "deny" && c.Source == "default")
	}
	n := 0
	for _, rc := range r.Receipts {
		if defaultDeny && rc.ErrorCode == "approval_rejected" {
			n++
		}
	}
	return n
}
