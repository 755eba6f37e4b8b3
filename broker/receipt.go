package broker

import (
	"encoding/json"
	"strconv"

	"github.com/apysup/apysup/internal/canonjson"
)

// ReceiptSchemaVersion tags receipts.
const ReceiptSchemaVersion = "apysup.receipt.v1"

// MaxReceipts bounds the receipts of one run.
const MaxReceipts = 256

// Receipt is the host-authored record of one admitted call (SPEC.md
// section 5). ReceiptID is the digest of the receipt without itself.
type Receipt struct {
	SchemaVersion     string `json:"schema_version"`
	ReceiptID         string `json:"receipt_id,omitempty"`
	RunID             string `json:"run_id"`
	PlanSHA256        string `json:"plan_sha256"`
	CallID            string `json:"call_id"`
	ParentCallID      string `json:"parent_call_id,omitempty"`
	ApprovalRequestID string `json:"approval_request_id,omitempty"`
	Capability        string `json:"capability"`
	OperationIndex    int    `json:"operation_index"`
	RequestSHA256     string `json:"request_sha256"`
	Outcome           string `json:"outcome"`
	ErrorCode         string `json:"error_code,omitempty"`
	ResponseSHA256    string `json:"response_sha256,omitempty"`
	// Replayed: the call was completed by an earlier attempt of the run
	// (under its idempotency key); its outcome and result digest are that
	// attempt's, and nothing was dispatched this time.
	Replayed bool `json:"replayed,omitempty"`
	// ProviderReceiptSHA256 references a Provider's decision receipt (its
	// DecisionProjection's ReceiptSHA256) for a call the provider decided.
	ProviderReceiptSHA256 string `json:"provider_receipt_sha256,omitempty"`
}

// computeID is the domain-separated digest of the receipt with
// receipt_id left out.
func (r Receipt) computeID() string {
	r.ReceiptID = ""
	var buf [640]byte // on the stack: the digest keeps nothing of it
	return canonjson.Digest(canonjson.DomainReceipt, r.appendCanonical(buf[:0]))
}

// canonical is the RFC 8785 form of the receipt.
func (r Receipt) canonical() []byte { return r.appendCanonical(make([]byte, 0, 640)) }

// appendCanonical appends the RFC 8785 form of the receipt, written
// directly (keys in sorted order, omitempty as in the JSON tags): receipts
// are written on every call, and this is several times cheaper than
// encoding/json plus a JCS transform. TestReceiptCanonicalMatchesJCS keeps
// the two identical.
func (r Receipt) appendCanonical(b []byte) []byte {
	b = append(b, '{')
	b = appendStr(b, "approval_request_id", r.ApprovalRequestID, true)
	b = appendStr(b, "call_id", r.CallID, false)
	b = appendStr(b, "capability", r.Capability, false)
	b = appendStr(b, "error_code", r.ErrorCode, true)
	b = strconv.AppendInt(appendKey(b, "operation_index"), int64(r.OperationIndex), 10)
	b = appendStr(b, "outcome", r.Outcome, false)
	b = appendStr(b, "parent_call_id", r.ParentCallID, true)
	b = appendStr(b, "plan_sha256", r.PlanSHA256, false)
	b = appendStr(b, "provider_receipt_sha256", r.ProviderReceiptSHA256, true)
	b = appendStr(b, "receipt_id", r.ReceiptID, true)
	if r.Replayed {
		b = append(appendKey(b, "replayed"), "true"...)
	}
	b = appendStr(b, "request_sha256", r.RequestSHA256, false)
	b = appendStr(b, "response_sha256", r.ResponseSHA256, true)
	b = appendStr(b, "run_id", r.RunID, false)
	b = appendStr(b, "schema_version", r.SchemaVersion, false)
	return append(b, '}')
}

// appendKey and appendStr write the members of a JSON object in RFC 8785
// form directly, for the documents written on every call (receipts,
// effect bindings): several times cheaper than encoding/json plus a JCS
// transform. The caller opens and closes the object and gives its members
// in sorted key order; each such document has a test that keeps it
// identical to canonjson.MustMarshal's. They append to a slice and return
// it, so that a document only digested can be written into a buffer on
// the caller's stack.

// appendKey appends a member's key and colon, after a comma unless the
// object has just been opened.
func appendKey(b []byte, k string) []byte {
	if b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	return append(canonjson.AppendString(b, k), ':')
}

// appendStr appends a string member (left out when empty, if omitEmpty).
func appendStr(b []byte, k, v string, omitEmpty bool) []byte {
	if omitEmpty && v == "" {
		return b
	}
	return canonjson.AppendString(appendKey(b, k), v)
}

// TranscriptEntry records a captured call by digest, with its transport
// evidence and nothing else: no endpoint, header or credential.
type TranscriptEntry struct {
	CallID          string            `json:"call_id"`
	Capability      string            `json:"capability"`
	ArgumentsSHA256 string            `json:"arguments_sha256"`
	ResultSHA256    string            `json:"result_sha256"`
	Evidence        TransportEvidence `json:"evidence"`
}

// DecodeReceipt parses one receipt strictly (unknown fields refused).
func DecodeReceipt(raw json.RawMessage) (Receipt, error) {
	var r Receipt
	err := canonjson.DecodeStrict(raw, canonjson.MaxGuestBytes, &r)
	return r, err
}
