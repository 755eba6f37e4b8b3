package broker

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/plan"
)

// Codes of the run response validator.
const (
	CodeTooManyReceipts   = "too_many_receipts"
	CodeReceiptMalformed  = "receipt_malformed"
	CodeReceiptIDMismatch = "receipt_id_mismatch"
	CodeReceiptPlan       = "receipt_plan_mismatch"
	CodeReceiptRun        = "receipt_run_mismatch"
	CodeReceiptOrder      = "receipt_order_invalid"
	CodeReceiptCallID     = "receipt_call_id_invalid"
	CodeGuestHostField    = "guest_forged_host_field"
)

// HostFields are keys only the host writes. A guest result that carries
// one at its top level is refused, never merged.
var HostFields = []string{"receipts", "plan_sha256", "execution_ref", "workspace_receipt"}

// VerifyProblem is one failed check of a run response.
type VerifyProblem struct {
	Index  int    `json:"index"` // receipt index, -1 for the whole response
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

func (p VerifyProblem) Error() string {
	return fmt.Sprintf("receipt %d: %s: %s", p.Index, p.Code, p.Detail)
}

// ErrorCode is the problem's stable code.
func (p VerifyProblem) ErrorCode() string { return p.Code }

// VerifyError lists every failed check.
type VerifyError struct{ Problems []VerifyProblem }

// Unwrap exposes each problem (a VerifyProblem) to errors.As.
func (e *VerifyError) Unwrap() []error {
	out := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		out[i] = p
	}
	return out
}

func (e *VerifyError) Error() string {
	var lines []string
	for _, p := range e.Problems {
		lines = append(lines, p.Error())
	}
	return strings.Join(lines, "\n")
}

// VerifyReceipts checks a run's receipts: at most 256, each well-formed and
// recomputing to its receipt_id, each bound to planSHA256 and runID,
// operation indexes in order, and call ids well-formed and unique (a
// programmatic id names the receipt's parent). The ids of one parent need
// not be 1..k: a call the grant refused consumed its sequence number but
// has no receipt (grant_denied is receipt-free); the run's event ledger
// accounts for every admitted call (VerifyLedger).
func VerifyReceipts(planSHA256, runID string, receipts []json.RawMessage) error {
	var problems []VerifyProblem
	add := func(i int, code, format string, args ...any) {
		problems = append(problems, VerifyProblem{Index: i, Code: code, Detail: fmt.Sprintf(format, args...)})
	}
	if len(receipts) > MaxReceipts {
		add(-1, CodeTooManyReceipts, "%d receipts > %d", len(receipts), MaxReceipts)
	}
	seen := map[string]bool{}
	for i, raw := range receipts {
		r, err := DecodeReceipt(raw)
		if err != nil {
			add(i, CodeReceiptMalformed, "%v", err)
			continue
		}
		if r.SchemaVersion != ReceiptSchemaVersion || !canonjson.IsDigest(r.RequestSHA256) ||
			(r.ResponseSHA256 != "" && !canonjson.IsDigest(r.ResponseSHA256)) || !validOutcome(r.Outcome) ||
			(r.ProviderReceiptSHA256 != "" && !canonjson.IsDigest(r.ProviderReceiptSHA256)) {
			add(i, CodeReceiptMalformed, "schema_version, digests or outcome malformed")
		}
		if r.ReceiptID != r.computeID() {
			add(i, CodeReceiptIDMismatch, "receipt_id does not recompute")
		}
		if r.PlanSHA256 != planSHA256 {
			add(i, CodeReceiptPlan, "bound to %s, not this run's plan", r.PlanSHA256)
		}
		if r.RunID != runID {
			add(i, CodeReceiptRun, "bound to another run")
		}
		if r.OperationIndex != i {
			add(i, CodeReceiptOrder, "operation_index %d at position %d", r.OperationIndex, i)
		}
		if seen[r.CallID] {
			add(i, CodeReceiptCallID, "call id used twice")
		}
		seen[r.CallID] = true
		if parent, n, isProgram := strings.Cut(r.CallID, ":program:"); isProgram {
			if _, ok := parseSeq(n); !ok || parent != r.ParentCallID || !plan.ParentPattern.MatchString(parent) {
				add(i, CodeReceiptCallID, "programmatic call id malformed or parent mismatch")
			}
		} else if n, ok := strings.CutPrefix(r.CallID, "capability-"); !ok || r.ParentCallID != "" {
			add(i, CodeReceiptCallID, "direct call id malformed")
		} else if _, ok := parseSeq(n); !ok {
			add(i, CodeReceiptCallID, "direct call id malformed")
		}
	}
	if len(problems) > 0 {
		return &VerifyError{Problems: problems}
	}
	return nil
}

func validOutcome(o string) bool {
	switch o {
	case StatusOK, StatusError, StatusDenied, StatusAmbiguous:
		return true
	}
	return false
}

// CheckGuestOutput refuses a guest result that authors host fields.
func CheckGuestOutput(result json.RawMessage) error {
	if len(result) == 0 {
		return nil
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(result, &top) != nil {
		return nil // not an object: it cannot carry host fields
	}
	for _, f := range HostFields {
		if _, ok := top[f]; ok {
			return &VerifyError{Problems: []VerifyProblem{{Index: -1, Code: CodeGuestHostField, Detail: "guest output carries host field " + f}}}
		}
	}
	return nil
}

// MarshalReceipts returns each receipt as JSON, for VerifyReceipts and for
// run results.
func MarshalReceipts(rs []Receipt) []json.RawMessage {
	out := make([]json.RawMessage, len(rs))
	for i, r := range rs {
		out[i] = canonjson.MustMarshal(r)
	}
	return out
}
