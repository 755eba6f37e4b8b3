package broker

import (
	"encoding/json"

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
}

// computeID is the domain-separated digest of the receipt with
// receipt_id left out.
func (r Receipt) computeID() string {
	r.ReceiptID = ""
	return canonjson.Digest(canonjson.DomainReceipt, canonjson.MustMarshal(r))
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

// receiptFields is the exact field set of a receipt, for strict decoding.
type receiptFields = Receipt

// DecodeReceipt parses one receipt strictly (unknown fields refused).
func DecodeReceipt(raw json.RawMessage) (Receipt, error) {
	var r receiptFields
	err := canonjson.DecodeStrict(raw, canonjson.MaxGuestBytes, &r)
	return r, err
}
