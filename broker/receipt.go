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
	return canonjson.Digest(canonjson.DomainReceipt, r.canonical())
}

// canonical is the RFC 8785 form of the receipt, written directly (keys in
// sorted order, omitempty as in the JSON tags): receipts are written on
// every call, and this is several times cheaper than encoding/json plus a
// JCS transform. TestReceiptCanonicalMatchesJCS keeps the two identical.
func (r Receipt) canonical() []byte {
	o := newCanonObject(640)
	o.str("approval_request_id", r.ApprovalRequestID, true)
	o.str("call_id", r.CallID, false)
	o.str("capability", r.Capability, false)
	o.str("error_code", r.ErrorCode, true)
	o.b = append(o.b, `,"operation_index":`...)
	o.b = strconv.AppendInt(o.b, int64(r.OperationIndex), 10)
	o.str("outcome", r.Outcome, false)
	o.str("parent_call_id", r.ParentCallID, true)
	o.str("plan_sha256", r.PlanSHA256, false)
	o.str("provider_receipt_sha256", r.ProviderReceiptSHA256, true)
	o.str("receipt_id", r.ReceiptID, true)
	if r.Replayed {
		o.b = append(o.b, `,"replayed":true`...)
	}
	o.str("request_sha256", r.RequestSHA256, false)
	o.str("response_sha256", r.ResponseSHA256, true)
	o.str("run_id", r.RunID, false)
	o.str("schema_version", r.SchemaVersion, false)
	return o.close()
}

// canonObject writes a JSON object in RFC 8785 form directly, its members
// given in sorted key order: for the documents written on every call
// (receipts, effect bindings), several times cheaper than encoding/json
// plus a JCS transform. Each such document has a test that keeps it
// identical to canonjson.MustMarshal's.
type canonObject struct {
	b   []byte
	sep bool
}

func newCanonObject(size int) *canonObject {
	return &canonObject{b: append(make([]byte, 0, size), '{')}
}

// key starts a member.
func (o *canonObject) key(k string) {
	if o.sep {
		o.b = append(o.b, ',')
	}
	o.sep = true
	o.b = canonjson.AppendString(o.b, k)
	o.b = append(o.b, ':')
}

// str writes a string member (left out when empty, if omitEmpty).
func (o *canonObject) str(k, v string, omitEmpty bool) {
	if omitEmpty && v == "" {
		return
	}
	o.key(k)
	o.b = canonjson.AppendString(o.b, v)
}

func (o *canonObject) close() []byte { return append(o.b, '}') }

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
