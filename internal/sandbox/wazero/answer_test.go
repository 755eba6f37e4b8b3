package wazero

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/internal/rpc"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/testenv"
	"github.com/apysup/apysup/python"
)

// okEnvelope is the envelope of a call the Broker completed with result.
func okEnvelope(result string) []byte { return rpc.Completed(okResponse(result), false) }

func okResponse(result string) []byte {
	r := broker.Response{
		SchemaVersion: broker.ResponseSchemaVersion, CallID: "main:program:1",
		Status: broker.StatusOK, Result: json.RawMessage(result),
		ReceiptID: "sha256:" + strings.Repeat("0", 64),
	}
	return r.AppendJSON(nil)
}

// Only a completed call's canonical result goes to the guest as itself;
// every other envelope goes as it is, for the guest's decode.
func TestGuestAnswer(t *testing.T) {
	refused := broker.Response{SchemaVersion: broker.ResponseSchemaVersion, CallID: "main:program:1",
		Status: broker.StatusRefused, ErrorCode: broker.CodeGrantDenied, Message: "no"}
	for _, tc := range []struct {
		name     string
		envelope []byte
		result   string // "" when the envelope goes as it is
	}{
		{"completed", okEnvelope(`{"echo":{"text":"x"}}`), `{"echo":{"text":"x"}}`},
		{"completed, a scalar", okEnvelope(`1e+21`), `1e+21`},
		{"replayed", rpc.Completed(okResponse(`[1]`), true), `[1]`},
		{"refused", rpc.Completed(refused.AppendJSON(nil), false), ""},
		{"rejected", []byte(`{"status":"rejected","error_code":"frame_malformed","message":"m"}`), ""},
		{"ambiguous", []byte(`{"status":"ambiguous","error_code":"dispatch_outcome_unknown"}`), ""},
		{"ok without a result", []byte(`{"status":"completed","broker_response":{"status":"ok"}}`), ""},
		{"a result not canonical", okEnvelope(`{"b":1,"a":2}`), ""},
		{"a number not canonical", okEnvelope(`1.0`), ""},
		{"a name of no envelope", []byte(`{"status":"completed","broker_response":{"status":"ok","result":1},"x":1}`), ""},
		{"a name of no response", []byte(`{"status":"completed","broker_response":{"status":"ok","result":1,"x":1}}`), ""},
		{"a duplicate status", []byte(`{"status":"completed","broker_response":{"status":"error","status":"ok","result":1}}`), ""},
		{"a lone surrogate", okEnvelope(`"\ud800"`), ""},
		{"status not a string", []byte(`{"status":"completed","broker_response":{"status":["ok"],"result":1}}`), ""},
		{"not JSON", []byte(`{"status":"completed",`), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := guestAnswer(tc.envelope)
			want := tc.envelope
			if tc.result != "" {
				want = append([]byte{resultMark}, tc.result...)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("guestAnswer(%s) = %q, want %q", tc.envelope, got, want)
			}
		})
	}
}

// A completed call's answer reaches guest memory as resultMark and its
// result, within the same bounds as an envelope.
func TestDeliverResult(t *testing.T) {
	env := okEnvelope(`{"a":[1,2]}`)
	mem := &fakeMemory{b: make([]byte, 64)}
	if got := deliver(mem, env, 8, 12); got != 12 || !bytes.Equal(mem.b[8:20], []byte("\x00{\"a\":[1,2]}")) {
		t.Fatalf("deliver = %d, memory %q", got, mem.b[8:20])
	}
	if got := deliver(mem, env, 8, 11); got != -1 {
		t.Fatalf("deliver into 11 bytes = %d, want -1", got)
	}
	// An envelope is JSON; one that began with the mark would be read as
	// a result: none is delivered.
	if got := deliver(mem, []byte("\x00{}"), 8, 12); got != -1 {
		t.Fatalf("deliver of an envelope beginning with the mark = %d, want -1", got)
	}
}

// The result the guest is handed for a completed call is, byte for byte,
// what _agent_runtime_wire.decode (the native guest's decoder, and the
// wazero guest's for every other answer) makes of the same envelope: for
// random results made canonical as the Broker makes them, each decoded by
// the host's python3.11 with the guest's own files.
func TestGuestAnswerIsDecodes(t *testing.T) {
	_, err := os.Stat(sandbox.GuestPython)
	testenv.Need(t, err == nil, sandbox.GuestPython)
	dir := t.TempDir()
	if err := os.CopyFS(dir, python.GuestFiles); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(58, 1))
	var envelopes [][]byte
	var want [][]byte
	for len(envelopes) < 3000 {
		canon, err := canonjson.Canonical([]byte(randomJSON(rng, 0)))
		if err != nil {
			continue // out of a double's range, as the Broker refuses it
		}
		env := okEnvelope(string(canon))
		answer := guestAnswer(env)
		if len(answer) == 0 || answer[0] != resultMark {
			t.Fatalf("no result answer for %s", env)
		}
		envelopes = append(envelopes, env)
		want = append(want, answer[1:])
	}
	script := `import sys
sys.path.insert(0, sys.argv[1])
import _agent_runtime_wire as w
for line in sys.stdin.buffer.read().split(b"\n")[:-1]:
    try:
        print(w.decode(line).hex())
    except w.AgentRuntimeError as e:
        print(e.error_code)
`
	cmd := exec.Command(sandbox.GuestPython, "-I", "-S", "-c", script, dir)
	cmd.Stdin = bytes.NewReader(append(bytes.Join(envelopes, []byte("\n")), '\n'))
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(envelopes) {
		t.Fatalf("%d answers from decode for %d envelopes", len(lines), len(envelopes))
	}
	for i, line := range lines {
		if got := fmt.Sprintf("%x", want[i]); line != got {
			t.Fatalf("envelope %s\ndecode: %s\nguestAnswer: %s", envelopes[i], line, got)
		}
	}
}

// randomJSON is a JSON value, not canonical, of the kinds a result holds:
// numbers of every magnitude, text with escapes, controls, characters
// beyond the BMP and in U+E000-U+FFFF (whose order differs between code
// points and UTF-16), nesting.
func randomJSON(rng *rand.Rand, depth int) string {
	kind := rng.IntN(9)
	if depth > 4 && kind >= 7 {
		kind = rng.IntN(7)
	}
	switch kind {
	case 0:
		return [...]string{"null", "true", "false"}[rng.IntN(3)]
	case 1:
		return strconv.FormatInt(rng.Int64N(1<<60)-1<<59, 10)
	case 2:
		return strconv.Itoa(rng.IntN(2000)-1000) + strings.Repeat("0", rng.IntN(30))
	case 3:
		f := math.Float64frombits(rng.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			f = 0.5
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	case 4:
		return strconv.FormatFloat(rng.NormFloat64()*math.Pow(10, float64(rng.IntN(50)-25)), 'e', rng.IntN(17), 64)
	case 5, 6:
		return randomString(rng)
	case 7:
		items := make([]string, rng.IntN(5))
		for i := range items {
			items[i] = randomJSON(rng, depth+1)
		}
		return "[" + strings.Join(items, ", ") + "]"
	default:
		members := make([]string, rng.IntN(5))
		seen := map[string]bool{}
		for i := range members {
			key := randomString(rng)
			for seen[key] {
				key = randomString(rng)
			}
			seen[key] = true
			members[i] = key + ": " + randomJSON(rng, depth+1)
		}
		return "{" + strings.Join(members, ", ") + "}"
	}
}

func randomString(rng *rand.Rand) string {
	pool := []rune{'a', 'b', 'Z', '0', ' ', '"', '\\', '/', '\n', '\t', 0, 0x1f, 0x7f, 'é', 0x2028, 0x2029,
		0xe000, 0xfeff, 0xffee, 0x1f600, 0x10000, 0x10ffff, '<', '&', '日'}
	runes := make([]rune, rng.IntN(6))
	for i := range runes {
		runes[i] = pool[rng.IntN(len(pool))]
	}
	b, _ := json.Marshal(string(runes))
	if rng.IntN(3) == 0 { // escaped where it need not be
		return strings.ReplaceAll(string(b), "a", `\u0061`)
	}
	return string(b)
}

// BenchmarkGuestAnswer is the host's part of handing a completed call's
// result to the guest as itself (an echo call's envelope).
func BenchmarkGuestAnswer(b *testing.B) {
	env := okEnvelope(`{"echo":{"text":"x"}}`)
	for b.Loop() {
		if answer := guestAnswer(env); answer[0] != resultMark {
			b.Fatal("no result answer")
		}
	}
}

// Whatever the envelope, guestAnswer hands it over as it is, or a result
// that is canonical JSON and is the result of a completed call with
// status "ok" that the envelope, read as plain JSON, holds.
func FuzzGuestAnswer(f *testing.F) {
	f.Add(okEnvelope(`{"echo":{"text":"x"}}`))
	f.Add(rpc.Completed(okResponse(`[1,"\u2028"]`), true))
	f.Add([]byte(`{"status":"completed","broker_response":{"status":"ok","result":{"b":1,"a":2}}}`))
	f.Add([]byte(`{"status":"completed","broker_response":{"status":"refused","error_code":"x"}}`))
	f.Fuzz(func(t *testing.T, envelope []byte) {
		answer := guestAnswer(envelope)
		if bytes.Equal(answer, envelope) {
			return
		}
		if len(answer) == 0 || answer[0] != resultMark {
			t.Fatalf("guestAnswer(%q) = %q: neither the envelope nor a result", envelope, answer)
		}
		result := answer[1:]
		if canon, err := canonjson.Canonical(result); err != nil || !bytes.Equal(canon, result) {
			t.Fatalf("result %q of %q is not canonical", result, envelope)
		}
		var doc struct {
			Status         string `json:"status"`
			BrokerResponse struct {
				Status string          `json:"status"`
				Result json.RawMessage `json:"result"`
			} `json:"broker_response"`
		}
		if err := json.Unmarshal(envelope, &doc); err != nil {
			t.Fatalf("handed over a result of %q, which is not JSON: %v", envelope, err)
		}
		if doc.Status != "completed" || doc.BrokerResponse.Status != "ok" || !bytes.Equal(doc.BrokerResponse.Result, result) {
			t.Fatalf("handed over %q from %q", result, envelope)
		}
	})
}
