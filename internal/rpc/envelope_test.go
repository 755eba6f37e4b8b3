package rpc

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/apysup/apysup/internal/canonjson"
)

func TestParseEnvelopeRefusals(t *testing.T) {
	good := string(envelopeFor(frame("capability-1", "echo.say", `{"a":[1,{"b":null}]}`)))
	deep := strings.Repeat(`[`, 64) + strings.Repeat(`]`, 64)
	cases := map[string]struct {
		body   string
		status int
		code   string
	}{
		"empty":                  {"", 400, CodeMalformedEnvelope},
		"not json":               {"hello", 400, CodeMalformedEnvelope},
		"array":                  {"[]", 400, CodeMalformedEnvelope},
		"trailing data":          {good + "{}", 400, CodeMalformedEnvelope},
		"invalid utf-8":          {strings.Replace(good, "echo.say", "echo.\xff", 1), 400, CodeMalformedEnvelope},
		"lone surrogate":         {strings.Replace(good, "echo.say", `echo\ud800`, 1), 400, CodeMalformedEnvelope},
		"duplicate key":          {strings.Replace(good, `"channel_id":"ch-1"`, `"channel_id":"ch-1","channel_id":"ch-1"`, 1), 400, CodeMalformedEnvelope},
		"duplicate in frame":     {strings.Replace(good, `{"b":null}`, `{"b":null,"b":1}`, 1), 400, CodeMalformedEnvelope},
		"unknown field":          {strings.Replace(good, `"channel_id"`, `"x":1,"channel_id"`, 1), 400, CodeMalformedEnvelope},
		"case-folded field":      {strings.Replace(good, `"channel_id"`, `"Channel_ID"`, 1), 400, CodeMalformedEnvelope},
		"missing field":          {strings.Replace(good, `"invocation_id":"inv-1",`, ``, 1), 400, CodeMalformedEnvelope},
		"wrong schema":           {strings.Replace(good, `apysup.rpc.v1`, `apysup.rpc.v2`, 1), 400, CodeMalformedEnvelope},
		"id not a string":        {strings.Replace(good, `"inv-1"`, `7`, 1), 400, CodeMalformedEnvelope},
		"empty id":               {strings.Replace(good, `"inv-1"`, `""`, 1), 400, CodeMalformedEnvelope},
		"long id":                {strings.Replace(good, `"inv-1"`, `"`+strings.Repeat("i", 257)+`"`, 1), 400, CodeMalformedEnvelope},
		"call not object":        {string(envelopeFor(`[1]`)), 400, CodeMalformedEnvelope},
		"call null":              {string(envelopeFor(`null`)), 400, CodeMalformedEnvelope},
		"no call id":             {string(envelopeFor(`{"capability":"echo.say","arguments":{}}`)), 400, CodeMalformedEnvelope},
		"numeric call id":        {string(envelopeFor(`{"call_id":1,"capability":"echo.say","arguments":{}}`)), 400, CodeMalformedEnvelope},
		"case-folded call id":    {string(envelopeFor(`{"call_id":"capability-1","Call_ID":"capability-2","capability":"echo.say","arguments":{}}`)), 400, CodeMalformedEnvelope},
		"case-folded capability": {string(envelopeFor(`{"call_id":"capability-1","capability":"echo.say","CAPABILITY":"x","arguments":{}}`)), 400, CodeMalformedEnvelope},
		"too deep":               {string(envelopeFor(frame("capability-1", "echo.say", `{"d":`+deep+`}`))), 400, CodeMalformedEnvelope},
		"frame too large": {string(envelopeFor(frame("capability-1", "echo.say", `{"s":"`+strings.Repeat("x", MaxFrameBytes)+`"}`))),
			http.StatusRequestEntityTooLarge, CodeFrameTooLarge},
		"envelope too large": {good + strings.Repeat(" ", MaxEnvelopeBytes), http.StatusRequestEntityTooLarge, CodeRequestTooLarge},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env, ref := parseEnvelope([]byte(tc.body))
			if ref == nil {
				t.Fatalf("accepted: %+v", env)
			}
			if ref.status != tc.status || ref.code != tc.code {
				t.Fatalf("got %d %s, want %d %s", ref.status, ref.code, tc.status, tc.code)
			}
		})
	}
}

func TestParseEnvelopeAccepts(t *testing.T) {
	f := `{ "arguments": {"x": 1.50}, "call_id": "a:program:1", "capability": "echo.say" }`
	body := " \n" + string(envelopeFor(f)) + "\n"
	env, ref := parseEnvelope([]byte(body))
	if ref != nil {
		t.Fatalf("refused: %+v", ref)
	}
	if string(env.Frame) != f || env.CallID != "a:program:1" ||
		env.ChannelID != "ch-1" || env.InvocationID != "inv-1" || env.ExecutionID != "run-1" || env.PlanSHA256 != testPlan {
		t.Fatalf("%+v", env)
	}
}

// FuzzEnvelope: the parser never panics; whatever it accepts has a frame
// taken from the input unchanged that canonicalises (so its request digest
// exists), and non-empty bounded ids.
func FuzzEnvelope(f *testing.F) {
	f.Add(envelopeFor(frame("capability-1", "echo.say", `{"a":1}`)))
	f.Add(envelopeFor(`{"call_id":"x","call_id":"y"}`))
	f.Add([]byte(`{"schema_version":"apysup.rpc.v1","channel_id":"\u0063","invocation_id":"i","execution_id":"e","plan_sha256":"p","call":{"call_id":"\ud83d\ude00"}}`))
	f.Add([]byte(`{"call":{}}`))
	f.Add([]byte("\xef\xbb\xbf{}"))
	f.Add(envelopeFor(frame("capability-1", "echo.say", strings.Repeat("[", 63)+strings.Repeat("]", 63))))
	f.Add(envelopeFor(frame("capability-1", "echo.say", strings.Repeat("[", 64)+strings.Repeat("]", 64))))
	f.Fuzz(func(t *testing.T, data []byte) {
		env, ref := parseEnvelope(data)
		if ref != nil {
			if env != nil || ref.status < 400 || ref.code == "" {
				t.Fatalf("bad refusal %+v", ref)
			}
			return
		}
		if !bytes.Contains(data, env.Frame) || len(env.Frame) > MaxFrameBytes || env.Frame[0] != '{' {
			t.Fatalf("frame not from the input: %q", env.Frame)
		}
		if _, err := canonjson.Canonical(env.Frame); err != nil {
			t.Fatalf("accepted a frame without a canonical form: %v", err)
		}
		// The frame is strict JSON by itself, depth included, as the Broker
		// and the wazero host read it: the envelope's level is not its.
		if err := canonjson.Validate(env.Frame, MaxFrameBytes); err != nil {
			t.Fatalf("accepted a frame the Broker would refuse as malformed: %v", err)
		}
		for _, s := range []string{env.ChannelID, env.InvocationID, env.ExecutionID, env.PlanSHA256, env.CallID} {
			if s == "" || len(s) > maxIDBytes {
				t.Fatalf("bad id %q", s)
			}
		}
	})
}

// FuzzDispatch: any two bodies through the whole registry, in the order
// a, b, a, get documented statuses and JSON bodies; no call id is ever
// dispatched twice; and a repeat of a call id is refused as a mismatch
// exactly when its canonical frame differs.
func FuzzDispatch(f *testing.F) {
	f.Add(envelopeFor(frame("capability-1", "echo.say", `{}`)), envelopeFor(frame("capability-1", "echo.say", `{ }`)))
	f.Add(envelopeFor(frame("capability-1", "fault.panic", `{}`)), envelopeFor(frame("capability-1", "fault.panic", `{"a":1}`)))
	f.Add(envelopeFor(frame("capability-1", "fault.empty", `{"a":[]}`)), []byte(`{}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		tc := openTest(t, ChannelLimits{})
		close(tc.b.release) // fault.block must not hold the fuzzer
		ea, _ := parseEnvelope(a)
		eb, _ := parseEnvelope(b)
		first := 0
		for i, body := range [][]byte{a, b, a} {
			status, resp := tc.reg.Dispatch(t.Context(), testUID, tc.cred, body)
			switch status {
			case 200, 400, 401, 409, 413, 429:
			default:
				t.Fatalf("status %d", status)
			}
			if err := canonjson.Validate(resp, MaxEnvelopeBytes*2); err != nil {
				t.Fatalf("response %q: %v", resp, err)
			}
			switch {
			case i == 0:
				first = status
			case first != 200 || (status != 200 && status != 409) || ea == nil || eb == nil || ea.CallID != eb.CallID:
				// a did not enter the table, b never reached it, or b is another call
			case i == 1 && (status == 409) == sameRequest(ea.Frame, eb.Frame):
				t.Fatalf("call %q: b got %d, same request %v", ea.CallID, status, status != 409)
			case i == 2 && status == 409:
				t.Fatalf("call %q: a repeated got 409", ea.CallID)
			}
		}
		for _, id := range tc.b.callIDs() {
			if tc.b.count(id) != 1 {
				t.Fatalf("%q dispatched %d times", id, tc.b.count(id))
			}
		}
	})
}

// FuzzMembers: on any input the strict validator accepts, the top-level walk
// sees exactly the members encoding/json sees, with the same value bytes.
func FuzzMembers(f *testing.F) {
	f.Add([]byte(`{"a":1,"b\u0041":[{"c":"}"},"\\\""],"d":{"e":null}, "f" : -1.5e3 }`))
	f.Add([]byte(` { } `))
	f.Add([]byte(`[1,{"a":2}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if canonjson.Validate(data, MaxEnvelopeBytes) != nil {
			return
		}
		var want map[string]json.RawMessage
		isObject := json.Unmarshal(data, &want) == nil
		got := map[string]json.RawMessage{}
		ok := members(data, func(key string, value []byte) bool {
			got[key] = value
			return true
		})
		if ok != isObject {
			t.Fatalf("members says object=%v, encoding/json %v", ok, isObject)
		}
		if !ok {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("members %d, encoding/json %d", len(got), len(want))
		}
		for k, v := range want {
			if !bytes.Equal(got[k], v) {
				t.Fatalf("member %q: %q vs %q", k, got[k], v)
			}
		}
	})
}
