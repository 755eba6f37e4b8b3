package rpc

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

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

const callField = len(envelopeFields) - 1

// parseEnvelope parses data strictly: valid UTF-8, no duplicate keys at any
// depth, the frame's depth <= 64 (the envelope's own level not counted),
// exactly the envelope's fields (compared exactly, not
// case-insensitively as encoding/json would), and a call frame that is an
// object with a string call_id. Everything else about the frame is the
// Broker's to judge.
func parseEnvelope(data []byte) (*envelope, *refusal) {
	if len(data) > MaxEnvelopeBytes {
		return nil, errTooLarge
	}
	// The frame is one level down, and held to the depth the Broker holds
	// it to; the envelope's own members are strings.
	if err := canonjson.ValidateCarrier(data, MaxEnvelopeBytes, 1); err != nil {
		return nil, errMalformed
	}
	var raw [len(envelopeFields)][]byte
	seen := 0
	ok := members(data, func(key string, value []byte) bool {
		for i, name := range envelopeFields {
			if key == name {
				raw[i] = value
				seen++
				return true
			}
		}
		return false // an unknown field
	})
	if !ok || seen != len(envelopeFields) {
		return nil, errMalformed
	}
	var strs [callField]string
	for i := range strs {
		if !jsonString(raw[i], &strs[i]) {
			return nil, errMalformed
		}
	}
	frame := raw[callField]
	if frame[0] != '{' {
		return nil, errMalformed
	}
	if len(frame) > MaxFrameBytes {
		return nil, errFrameSize
	}
	if strs[0] != EnvelopeSchema {
		return nil, errMalformed
	}
	var callID string
	spelled := members(frame, func(key string, value []byte) bool {
		switch {
		case key == "call_id":
			jsonString(value, &callID)
		case foldsToFrameField(key):
			// encoding/json (and so a struct decoder in the Broker) would
			// read "Call_ID" as call_id: the table and the Broker would key
			// the call differently. Refused.
			return false
		}
		return true
	})
	if !spelled || callID == "" {
		return nil, errMalformed
	}
	return &envelope{
		ChannelID:    strs[1],
		InvocationID: strs[2],
		ExecutionID:  strs[3],
		PlanSHA256:   strs[4],
		Frame:        frame,
		CallID:       callID,
	}, nil
}

var frameFields = [...]string{"call_id", "capability", "arguments"}

// foldsToFrameField reports whether key is a frame field spelled in another
// case.
func foldsToFrameField(key string) bool {
	for _, f := range frameFields {
		if key != f && strings.EqualFold(key, f) {
			return true
		}
	}
	return false
}

// jsonString decodes raw into *s when it is a non-empty JSON string of at
// most maxIDBytes bytes. raw comes from validated JSON.
func jsonString(raw []byte, s *string) bool {
	if len(raw) < 2 || raw[0] != '"' {
		return false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		*s = string(raw[1 : len(raw)-1]) // valid UTF-8, no control bytes: checked
	} else if err := json.Unmarshal(raw, s); err != nil {
		return false
	}
	return *s != "" && len(*s) <= maxIDBytes
}

// members calls fn with each member of the JSON object in data, in order,
// until fn returns false; it reports whether data is an object and fn never
// said stop. data must have passed canonjson.Validate: this walks the
// top level only, without the cost of decoding what it skips.
func members(data []byte, fn func(key string, value []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return true
	}
	for i < len(data) && data[i] == '"' {
		start := i
		i = skipString(data, i)
		var key string
		if !jsonKey(data[start:i], &key) {
			return false
		}
		i = skipSpace(data, i)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i = skipSpace(data, i+1)
		start = i
		i = skipValue(data, i)
		if i == start || !fn(key, data[start:i]) {
			return false
		}
		i = skipSpace(data, i)
		if i >= len(data) {
			return false
		}
		if data[i] == '}' {
			return true
		}
		if data[i] != ',' {
			return false
		}
		i = skipSpace(data, i+1)
	}
	return false
}

func jsonKey(raw []byte, key *string) bool {
	if len(raw) < 2 || raw[len(raw)-1] != '"' {
		return false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		*key = string(raw[1 : len(raw)-1])
		return true
	}
	return json.Unmarshal(raw, key) == nil
}

func skipSpace(d []byte, i int) int {
	for i < len(d) && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at d[i] == '"'.
func skipString(d []byte, i int) int {
	for i++; i < len(d); i++ {
		switch d[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(d)
}

// skipValue returns the index after the value starting at d[i].
func skipValue(d []byte, i int) int {
	if i >= len(d) {
		return i
	}
	switch d[i] {
	case '"':
		return skipString(d, i)
	case '{', '[':
		depth := 0
		for i < len(d) {
			switch d[i] {
			case '"':
				i = skipString(d, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(d) && !endsLiteral(d[i]) {
		i++
	}
	return i
}

func endsLiteral(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}
