package wazero

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero/api"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/rpc"
)

// fakeMemory is guest memory for exercising the host side of host_call
// without a guest.
type fakeMemory struct {
	api.Memory
	b []byte
}

func (m *fakeMemory) Read(off, n uint32) ([]byte, bool) {
	if uint64(off)+uint64(n) > uint64(len(m.b)) {
		return nil, false
	}
	return m.b[off : off+n], true
}

func (m *fakeMemory) Write(off uint32, v []byte) bool {
	if uint64(off)+uint64(len(v)) > uint64(len(m.b)) {
		return false
	}
	copy(m.b[off:], v)
	return true
}

func (m *fakeMemory) WriteUint64Le(off uint32, v uint64) bool {
	return m.Write(off, binary.LittleEndian.AppendUint64(nil, v))
}

func TestExchange(t *testing.T) {
	frame := []byte(`{"call_id":"capability-1","capability":"echo","arguments":{}}`)
	mem := &fakeMemory{b: make([]byte, 64)}
	copy(mem.b[8:], frame[:40])
	full := &fakeMemory{b: append([]byte(nil), frame...)}
	answer := []byte(`{"schema_version":"apysup.broker.v1","status":"ok","result":1}`)
	for _, tc := range []struct {
		name       string
		broker     bool // a Dispatcher is configured
		mem        *fakeMemory
		ptr, n     uint32
		want       string
		dispatched bool
	}{
		{"completed", true, full, 0, uint32(len(frame)), `{"status":"completed","broker_response":` + string(answer) + `}`, true},
		{"no dispatcher", false, full, 0, uint32(len(frame)), `"error_code":"channel_unavailable"`, false},
		{"too large", true, full, 0, MaxMessageBytes + 1, `"error_code":"frame_too_large"`, false},
		{"empty", true, full, 0, 0, `"error_code":"frame_empty"`, false},
		{"out of bounds", true, mem, 60, 40, `"error_code":"frame_malformed"`, false},
		{"wraps around", true, mem, 0xffffffff, 2, `"error_code":"frame_malformed"`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []byte
			var d broker.Dispatcher
			if tc.broker {
				d = dispatcherFunc(func(_ context.Context, f []byte) []byte {
					got = f
					return answer
				})
			}
			env := exchange(context.Background(), rpc.Responder(d), tc.mem, tc.ptr, tc.n)
			if !json.Valid(env) || !strings.Contains(string(env), tc.want) {
				t.Fatalf("envelope %s, want it to contain %s", env, tc.want)
			}
			if (got != nil) != tc.dispatched {
				t.Fatalf("dispatched = %v, want %v", got != nil, tc.dispatched)
			}
			if tc.dispatched {
				if !bytes.Equal(got, frame) {
					t.Fatalf("frame %q, want %q", got, frame)
				}
				tc.mem.b[0] = 'X' // the Broker's copy must not alias guest memory
				if got[0] != '{' {
					t.Fatal("the dispatched frame aliases guest memory")
				}
			}
		})
	}
}

func TestDeliver(t *testing.T) {
	env := []byte(`{"status":"completed","broker_response":{}}`)
	for _, tc := range []struct {
		name      string
		env       []byte
		size      int
		ptr, capa uint32
		want      int32
	}{
		{"fits", env, 128, 16, 100, int32(len(env))},
		{"exactly", env, len(env), 0, uint32(len(env)), int32(len(env))},
		{"capacity too small", env, 128, 0, uint32(len(env) - 1), -1},
		{"outside memory", env, 32, 0, 100, -1},
		{"no answer", nil, 128, 0, 100, -1},
		{"over the limit", bytes.Repeat([]byte("x"), MaxMessageBytes+1), MaxMessageBytes + 8, 0, MaxMessageBytes + 8, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := &fakeMemory{b: make([]byte, tc.size)}
			if got := deliver(mem, tc.env, tc.ptr, tc.capa); got != tc.want {
				t.Fatalf("deliver = %d, want %d", got, tc.want)
			}
			if tc.want > 0 && !bytes.Equal(mem.b[tc.ptr:tc.ptr+uint32(tc.want)], tc.env) {
				t.Fatal("envelope not written where asked")
			}
		})
	}
}

// The host side of host_call takes pointers and lengths from the guest:
// whatever they are, it must neither panic nor touch memory outside the
// guest's, and answer with a JSON envelope or -1.
func FuzzHostCall(f *testing.F) {
	f.Add([]byte(`{"call_id":"capability-1"}`), uint32(0), uint32(26), uint32(0), uint32(64), []byte(`{"status":"ok"}`))
	f.Add([]byte("x"), uint32(0xffffffff), uint32(0xffffffff), uint32(0xfffffff0), uint32(0xffffffff), []byte(""))
	f.Fuzz(func(t *testing.T, memory []byte, ptr, n, respPtr, respCap uint32, answer []byte) {
		mem := &fakeMemory{b: append([]byte(nil), memory...)}
		var dispatched []byte
		d := dispatcherFunc(func(_ context.Context, frame []byte) []byte {
			dispatched = frame
			return answer
		})
		env := exchange(context.Background(), rpc.Responder(d), mem, ptr, n)
		if dispatched == nil && !json.Valid(env) {
			t.Fatalf("refusal %q is not JSON", env)
		}
		if dispatched != nil && uint32(len(dispatched)) != n {
			t.Fatalf("dispatched %d bytes, guest sent %d", len(dispatched), n)
		}
		got := deliver(mem, env, respPtr, respCap)
		if got != -1 && (got < 0 || int(got) != len(guestAnswer(env)) || uint32(got) > respCap) {
			t.Fatalf("deliver = %d for %d bytes into %d", got, len(env), respCap)
		}
	})
}

// host_call's arguments say what the guest asks for: a frame (its
// pointer and length), the answer still owed to a call a timer
// interrupted (no frame), or the call's give-up (no frame and no room for
// an answer), which an in-process run, whose calls are never interrupted,
// answers with nothing.
func TestHostCallArguments(t *testing.T) {
	frame := []byte(`{"call_id":"capability-1"}`)
	for _, tc := range []struct {
		name               string
		ptr, n, resp, capa uint32
		wantFault          string
		wantFrame          bool
	}{
		{"a frame", 0, uint32(len(frame)), 32, 120, "", true},
		{"a resume", 0, 0, 64, 64, faultResume, false},
		{"a give-up", 0, 0, 0, 0, faultGiveUp, false},
		{"a give-up with a buffer's pointer", 0, 0, 64, 0, faultGiveUp, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := memModule{mem: &fakeMemory{b: append(append([]byte(nil), frame...), make([]byte, 128)...)}}
			var gotFault string
			var gotFrame []byte
			var call hostCaller = func(_ context.Context, f []byte, fault string) ([]byte, bool) {
				gotFrame, gotFault = f, fault
				return respond(context.Background(), nil, f, fault), false
			}
			stack := []uint64{api.EncodeU32(tc.ptr), api.EncodeU32(tc.n), api.EncodeU32(tc.resp), api.EncodeU32(tc.capa)}
			hostCall(context.WithValue(context.Background(), runKey{}, call), m, stack)
			if gotFault != tc.wantFault || (gotFrame != nil) != tc.wantFrame {
				t.Fatalf("fault %q frame %q, want %q and a frame %v", gotFault, gotFrame, tc.wantFault, tc.wantFrame)
			}
			// No Dispatcher: a frame is refused (channel_unavailable); a
			// resume or a give-up has nothing to deliver.
			if got := api.DecodeI32(stack[0]); (got > 0) != tc.wantFrame {
				t.Fatalf("host_call = %d", got)
			}
		})
	}
}

// dispatcherFunc is a Dispatcher that answers with the broker response its
// function's bytes decode to; nil (no answer) when they are empty or do not
// decode.
type dispatcherFunc func(ctx context.Context, frame []byte) []byte

func (f dispatcherFunc) Call(ctx context.Context, frame []byte) *broker.Response {
	raw := f(ctx, frame)
	var r broker.Response
	if len(raw) == 0 || json.Unmarshal(raw, &r) != nil {
		return nil
	}
	return &r
}

// The codes and messages of a frame refused before the Broker sees it are
// the Broker's own (this package keeps copies: it does not import broker).
func TestFrameCodesAreTheBrokers(t *testing.T) {
	for code, want := range map[string]string{
		codeFrameTooLarge: broker.CodeFrameTooLarge, codeFrameEmpty: broker.CodeFrameEmpty, codeFrameMalformed: broker.CodeFrameMalformed,
	} {
		if code != want || frameMessages[code] != broker.Message(want) {
			t.Errorf("%s %q, the Broker's %s %q", code, frameMessages[code], want, broker.Message(want))
		}
	}
	if len(frameMessages) != 3 {
		t.Errorf("messages for %d codes", len(frameMessages))
	}
}
