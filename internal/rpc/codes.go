package rpc

// Response statuses (the "status" field of every response body).
const (
	StatusCompleted = "completed"
	StatusAmbiguous = "ambiguous"
	StatusRejected  = "rejected"
)

// Stable error codes. A refusal says which code applies and nothing more:
// in particular every authentication failure is CodeUnauthenticated.
const (
	CodeMalformedEnvelope    = "malformed_envelope"       // 400
	CodeUnauthenticated      = "unauthenticated"          // 401
	CodeNotFound             = "not_found"                // 404
	CodeMethodNotAllowed     = "method_not_allowed"       // 405
	CodeCallIdentityMismatch = "call_identity_mismatch"   // 409
	CodeRequestTooLarge      = "request_too_large"        // 413
	CodeFrameTooLarge        = "frame_too_large"          // 413
	CodeTooManyConcurrent    = "too_many_concurrent"      // 429
	CodeCallTableFull        = "call_table_full"          // 429
	CodeCallInFlight         = "call_in_flight"           // 200 ambiguous
	CodeDispatchUnknown      = "dispatch_outcome_unknown" // 200 ambiguous
)

// EnvelopeSchema is the schema_version of every request envelope.
const EnvelopeSchema = "apysup.rpc.v1"

// Size limits of one request.
const (
	MaxFrameBytes    = 1 << 20
	envelopeSlack    = 16 << 10 // the envelope's own fields around the frame
	MaxEnvelopeBytes = MaxFrameBytes + envelopeSlack
	maxIDBytes       = 256
)

func rejected(code string) []byte {
	return []byte(`{"status":"rejected","error_code":"` + code + `"}`)
}

func ambiguous(code string) []byte {
	return []byte(`{"status":"ambiguous","error_code":"` + code + `"}`)
}

// Completed is the transport envelope of a call the Broker answered: the
// broker response's wire form (broker.Response.AppendJSON) inside
// {"status":"completed","broker_response":...}, with "replayed":true when
// the channel answers a repeated call id from its table. The wazero host
// call answers with the same envelope.
func Completed(brokerResponse []byte, replayed bool) []byte {
	const head = `{"status":"completed","broker_response":`
	tail := `}`
	if replayed {
		tail = `,"replayed":true}`
	}
	out := make([]byte, 0, len(head)+len(brokerResponse)+len(tail))
	out = append(out, head...)
	out = append(out, brokerResponse...)
	return append(out, tail...)
}
