package rpc

import (
	"encoding/json"
	"net/http"

	"github.com/apysup/apysup/internal/canonjson"
)

// envelope is one parsed request body (SPEC.md section 6).
type envelope struct {
	ChannelID    string
	InvocationID string
	ExecutionID  string
	PlanSHA256   string
	// Frame is the guest's call frame, byte for byte as sent: the Broker
	// sees exactly what the wazero backend would hand it.
	Frame  []byte
	CallID string
	// Digest is the request digest: apysup.request.v1 over the canonical frame.
	Digest string
}

// refusal is an HTTP status with its stable code.
type refusal struct {
	status int
	code   string
}

func (r *refusal) body() []byte { return rejected(r.code) }

var (
	errMalformed = &refusal{http.StatusBadRequest, CodeMalformedEnvelope}
	errTooLarge  = &refusal{http.StatusRequestEntityTooLarge, CodeRequestTooLarge}
	errFrameSize = &refusal{http.StatusRequestEntityTooLarge, CodeFrameTooLarge}
)

var envelopeFields = [...]string{"schema_version", "channel_id", "invocation_id", "execution_id", "plan_sha256", "call"}

// parseEnvelope parses data strictly: valid UTF-8, no duplicate keys at any
// depth, depth <= 64, exactly the envelope's fields (compared exactly, not
// case-insensitively as encoding/json would), and a call frame that is an
// object with a string call_id. Everything else about the frame is the
// Broker's to judge.
func parseEnvelope(data []byte) (*envelope, *refusal) {
	if len(data) > MaxEnvelopeBytes {
		return nil, errTooLarge
	}
	if err := canonjson.Validate(data, MaxEnvelopeBytes); err != nil {
		return nil, errMalformed
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil || len(fields) != len(envelopeFields) {
		return nil, errMalformed
	}
	var strs [len(envelopeFields) - 1]string
	for i, name := range envelopeFields[:len(envelopeFields)-1] {
		raw, ok := fields[name]
		if !ok || !jsonString(raw, &strs[i]) {
			return nil, errMalformed
		}
	}
	frame, ok := fields["call"]
	if !ok || len(frame) == 0 || frame[0] != '{' {
		return nil, errMalformed
	}
	if len(frame) > MaxFrameBytes {
		return nil, errFrameSize
	}
	if strs[0] != EnvelopeSchema {
		return nil, errMalformed
	}
	var call map[string]json.RawMessage
	if err := json.Unmarshal(frame, &call); err != nil {
		return nil, errMalformed
	}
	var callID string
	if !jsonString(call["call_id"], &callID) {
		return nil, errMalformed
	}
	canonical, err := canonjson.Canonical(frame)
	if err != nil {
		return nil, errMalformed
	}
	return &envelope{
		ChannelID:    strs[1],
		InvocationID: strs[2],
		ExecutionID:  strs[3],
		PlanSHA256:   strs[4],
		Frame:        frame,
		CallID:       callID,
		Digest:       canonjson.Digest(canonjson.DomainRequest, canonical),
	}, nil
}

// jsonString decodes raw into *s when it is a non-empty JSON string of at
// most maxIDBytes bytes.
func jsonString(raw json.RawMessage, s *string) bool {
	if len(raw) == 0 || raw[0] != '"' {
		return false
	}
	if err := json.Unmarshal(raw, s); err != nil {
		return false
	}
	return *s != "" && len(*s) <= maxIDBytes
}
