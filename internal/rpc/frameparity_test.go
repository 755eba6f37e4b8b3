package rpc

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/sandbox"
)

// TestGuestRefusesWhatTheEnvelopeWould: a frame sent through the native
// bridge travels inside the channel's envelope, which parseEnvelope reads
// strictly; under wazero the same frame goes to the Broker alone. So the
// guest's check_frame must refuse, with the Broker's code, every frame
// whose envelope the channel would refuse: else one frame gets
// malformed_envelope natively and frame_malformed (or invalid_call_id)
// under wazero. Each frame below goes through the real bridge and channel;
// none may come back malformed_envelope, and the frames that reach the
// dispatcher are exactly those check_frame let through.
func TestGuestRefusesWhatTheEnvelopeWould(t *testing.T) {
	needPython(t)
	frames := tricky()
	rng := rand.New(rand.NewPCG(17, 64))
	for range 400 {
		frames = append(frames, randomFrame(rng))
	}
	// A valid id is a new one for each frame, so that the channel's table
	// answers none of them as a replay or a mismatch.
	for i, f := range frames {
		frames[i] = strings.ReplaceAll(f, `"@ID@"`, `"capability-`+strconv.Itoa(i+1)+`"`)
	}
	var script strings.Builder
	script.WriteString("import _agent_runtime_host as h, agent_runtime\nout = []\nfor f in (\n")
	for _, f := range frames {
		script.WriteString("  bytes.fromhex('" + hex.EncodeToString([]byte(f)) + "'),\n")
	}
	script.WriteString(`):
    try:
        h.call(f)
        out.append("")
    except Exception as e:
        out.append(getattr(e, "error_code", type(e).__name__))
agent_runtime.set_result(out)
`)
	reached := map[string]bool{}
	res, err := RunUnsandboxed(context.Background(), UnsandboxedJob{
		Script:     []byte(script.String()),
		PlanSHA256: testPlan,
		RunID:      "run-frames",
		Dispatcher: dispatcherFunc(func(_ context.Context, f []byte) *broker.Response {
			reached[string(f)] = true // without the whitespace around it in the envelope
			return &broker.Response{SchemaVersion: broker.ResponseSchemaVersion, CallID: "x", Status: "ok", Result: json.RawMessage(`{}`)}
		}),
		Limits: ChannelLimits{MaxCalls: len(frames) + 1, MaxCachedBytes: 1 << 30},
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := sandbox.ParseOutcome(res.Outcome)
	if err != nil || out.ExitCode != 0 {
		t.Fatalf("%v exit %d\n%s", err, res.ExitCode, res.Stderr)
	}
	var codes []string
	if err := json.Unmarshal(out.Result, &codes); err != nil || len(codes) != len(frames) {
		t.Fatalf("%v: %d codes for %d frames", err, len(codes), len(frames))
	}
	refused := 0
	for i, f := range frames {
		_, channel := parseEnvelope(envelopeFor(f))
		f = strings.Trim(f, " \t\r\n")
		switch code := codes[i]; {
		case code == CodeMalformedEnvelope:
			t.Errorf("frame %q: malformed_envelope natively, which under wazero the Broker answers otherwise", f)
		case code == "" && channel != nil:
			t.Errorf("frame %q: check_frame let through what the channel refuses (%s)", f, channel.code)
		case code == "" && !reached[f]:
			t.Errorf("frame %q: answered without reaching the dispatcher", f)
		case code != "" && reached[f]:
			t.Errorf("frame %q: refused (%s) after it reached the dispatcher", f, code)
		case code != "":
			refused++
		}
	}
	if refused == 0 || refused == len(frames) {
		t.Fatalf("%d of %d frames refused: the set does not test both ways", refused, len(frames))
	}
}

// tricky are frames at each edge of strict JSON that the channel's envelope
// and the Broker judge: numbers at a double's range, lone surrogates in
// keys and values, duplicate and case-folded names, call ids, depth.
func tricky() []string {
	f := func(id, args string) string {
		return `{"call_id":` + id + `,"capability":"echo.say","arguments":` + args + `}`
	}
	ok := `"@ID@"`
	digits := func(n int) string { return "1" + strings.Repeat("0", n-1) }
	return []string{
		f(ok, `{"n":1e400}`), f(ok, `{"n":-1e400}`), f(ok, `{"n":1e-400}`), f(ok, `{"n":1E+308}`),
		f(ok, `{"n":1.7976931348623157e308}`), f(ok, `{"n":1.7976931348623159e308}`),
		f(ok, `{"n":-1.7976931348623159e308}`), f(ok, `{"n":`+digits(309)+`}`), f(ok, `{"n":`+digits(310)+`}`),
		f(ok, `{"n":-`+digits(310)+`}`), f(ok, `{"n":`+digits(5000)+`}`), f(ok, `{"n":[1e999,2]}`),
		f(ok, `{"n":NaN}`), f(ok, `{"n":-Infinity}`), f(ok, `{"n":-0}`), f(ok, `{"n":01}`),
		f(ok, `{"\ud800":1}`), f(ok, `{"a":{"\udfff":[]}}`), f(ok, `{"a":"\ud800"}`), f(ok, `{"\ud83d\ude00":1}`),
		f(ok, `{"a":1,"a":2}`), f(ok, `{"a":{"b":1,"b":1}}`), f(ok, `{"a":"\u0000"}`), f(ok, "{\"a\":\"\x01\"}"),
		f(`""`, `{}`), f(`"`+strings.Repeat("9", 257)+`"`, `{}`), f(`1`, `{}`), f(`null`, `{}`), f(`"\u0063apability-1"`, `{}`),
		`{"Call_ID":"capability-1","capability":"echo.say","arguments":{}}`,
		`{"call_id":"capability-1","call_id":"capability-2","capability":"echo.say","arguments":{}}`,
		`{"call_id":"capability-1","capability":"echo.say","arguments":{},"extra":1}`,
		`{"call_id":"capability-1","capability":"echo.say"}`,
		`{"call_id":"capability-1","capability":"echo.say","arguments":[]}`,
		f(ok, strings.Repeat(`{"a":`, 63)+`1`+strings.Repeat(`}`, 63)),
		f(ok, strings.Repeat(`[`, 63)+strings.Repeat(`]`, 63)),
		f(ok, strings.Repeat(`[`, 64)+strings.Repeat(`]`, 64)),
		f(ok, `{}`) + ` `, ` ` + f(ok, `{}`), f(ok, `{}`) + `x`, "\ufeff" + f(ok, `{}`), f(ok, "{\"a\":\"\xff\"}"),
		`[]`, `"x"`, `{`,
	}
}

// randomFrame builds a frame from random pieces, most of them valid, some
// at the edges tricky() names.
func randomFrame(rng *rand.Rand) string {
	pieces := []string{`1`, `-0.5`, `1e308`, `2e308`, `1e-999`, `"s"`, `"\ud800"`, `"\ud800\udc00"`, `"\u00e9"`,
		`true`, `null`, `[]`, `{}`, `[1,2]`, `{"k":"v"}`, `123456789012345678901234567890`, `NaN`, `"\u0001"`}
	keys := []string{`"a"`, `"b"`, `"\ud800"`, `"\u0061"`, `"é"`, `""`}
	var value func(depth int) string
	value = func(depth int) string {
		switch n := rng.IntN(10); {
		case depth > 3 || n < 5:
			return pieces[rng.IntN(len(pieces))]
		case n < 7:
			var items []string
			for range rng.IntN(3) {
				items = append(items, value(depth+1))
			}
			return "[" + strings.Join(items, ",") + "]"
		default:
			var members []string
			for range rng.IntN(3) {
				members = append(members, keys[rng.IntN(len(keys))]+":"+value(depth+1))
			}
			return "{" + strings.Join(members, ",") + "}"
		}
	}
	ids := []string{`"@ID@"`, `"@ID@"`, `"main:program:1"`, `""`, `"x"`}
	var members []string
	for range rng.IntN(3) {
		members = append(members, keys[rng.IntN(len(keys))]+":"+value(1))
	}
	return `{"call_id":` + ids[rng.IntN(len(ids))] + `,"capability":"echo.say","arguments":{` + strings.Join(members, ",") + `}}`
}
