package wazero

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/tetratelabs/wazero/api"

	"github.com/apysup/apysup/internal/canonjson"
)

// Dispatcher answers a run's host calls: the transport envelope of the
// call frame's answer (rpc.Responder makes one from a broker.Dispatcher:
// {"status":"completed","broker_response":...}), nil when there is none.
// A function, not broker.Dispatcher, so that this package does not depend
// on package broker: a child process becomes one in this package's init
// function, and every package this one imports is initialised before it
// (broker's pull in the JSON Schema compiler's, 8 ms of every child's
// start).
type Dispatcher func(ctx context.Context, frame []byte) []byte

// The Broker's codes and messages for a frame the guest could not hand
// over whole (broker.CodeFrameTooLarge and the rest; a test checks that
// they are the same).
const (
	codeFrameTooLarge      = "frame_too_large"
	codeFrameEmpty         = "frame_empty"
	codeFrameMalformed     = "frame_malformed"
	codeChannelUnavailable = "channel_unavailable"
)

var frameMessages = map[string]string{
	codeFrameTooLarge:  "the call frame is larger than 1 MiB",
	codeFrameEmpty:     "the call frame is empty",
	codeFrameMalformed: "the call frame is not strict JSON of the form {call_id, capability, arguments}",
}

const (
	hostModule   = "agent_runtime_v1"
	hostCallName = "host_call"
	// MaxMessageBytes bounds the call frame and the response envelope, each.
	MaxMessageBytes = 1 << 20
)

// runKey carries the run's hostCaller from Run to hostCall through the
// context wazero hands to host functions: one host module serves every
// concurrent run, each with its own Broker (in-process) or parent (in a
// child process).
type runKey struct{}

// hostCall is agent_runtime_v1.host_call(req_ptr, req_len, resp_ptr,
// resp_cap) -> i32: the response envelope's length; -1 when the host
// cannot hand back an answer after the frame may have been dispatched; or
// hostCallInterrupted when one of the guest's interval timers came due
// while it waited, as a blocking recv(2) is interrupted natively. The guest
// then runs its signal handlers, and either gives the call up (a handler
// raised) with req_ptr, req_len and resp_cap 0, which cancels the call in
// the Broker and drops its answer when it comes, or waits on with req_ptr
// and req_len 0, which is no frame a guest sends (frame_empty is refused
// before the import).
func hostCall(ctx context.Context, mod api.Module, stack []uint64) {
	call, _ := ctx.Value(runKey{}).(hostCaller)
	var envelope []byte
	if call != nil {
		ptr, n := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
		var frame []byte
		fault := faultResume
		switch {
		case ptr != 0 || n != 0:
			frame, fault = readFrame(mod.Memory(), ptr, n)
		case api.DecodeU32(stack[3]) == 0:
			fault = faultGiveUp // no frame and no room for an answer
		}
		var interrupted bool
		if envelope, interrupted = call(ctx, frame, fault); interrupted {
			stack[0] = api.EncodeI32(hostCallInterrupted)
			return
		}
	}
	stack[0] = api.EncodeI32(deliver(mod.Memory(), envelope,
		api.DecodeU32(stack[2]), api.DecodeU32(stack[3])))
}

const (
	// faultResume is a host_call with no frame: wait on for the answer
	// to the call a timer interrupted.
	faultResume = "resume"
	// faultGiveUp is a host_call with no frame and no room for an answer:
	// the guest gave up the call a timer interrupted. A child sends it to
	// its parent, which cancels the call in the Broker.
	faultGiveUp = "give_up"
	// hostCallInterrupted is host_call's answer when a timer came due
	// first (the C module's HOST_CALL_INTERRUPTED).
	hostCallInterrupted = -2
)

// exchange reads the frame out of guest memory and returns the response
// envelope (respond).
func exchange(ctx context.Context, d Dispatcher, mem api.Memory, ptr, n uint32) []byte {
	frame, fault := readFrame(mem, ptr, n)
	return respond(ctx, d, frame, fault)
}

// readFrame copies the frame out of guest memory, or names the Broker's
// code for why there is none to copy.
func readFrame(mem api.Memory, ptr, n uint32) (frame []byte, fault string) {
	if n > MaxMessageBytes {
		return nil, codeFrameTooLarge
	}
	if n == 0 {
		return nil, codeFrameEmpty
	}
	view, ok := mem.Read(ptr, n)
	if !ok {
		return nil, codeFrameMalformed
	}
	// A copy: the Broker may keep the frame, and guest memory moves on grow.
	return bytes.Clone(view), ""
}

// respond answers a frame, or the fault readFrame found instead of one.
// The guest module refuses bad frames before calling (as the native bridge
// does); what still arrives malformed is refused here with the Broker's
// codes and messages, and no dispatcher means what it means natively: no
// channel. A frame from a child process is checked again here: the child
// is no more trusted than its guest.
func respond(ctx context.Context, d Dispatcher, frame []byte, fault string) []byte {
	switch {
	case fault == faultResume || fault == faultGiveUp:
		return nil // no call is waiting here: only a child's calls are interrupted
	case d == nil:
		return rejected(codeChannelUnavailable, "the capability channel is not configured")
	}
	switch {
	case fault == "" && len(frame) > MaxMessageBytes:
		fault = codeFrameTooLarge
	case fault == "" && len(frame) == 0:
		fault = codeFrameEmpty
	}
	if fault != "" {
		return rejected(fault, frameMessages[fault])
	}
	return d(ctx, frame)
}

// deliver writes the answer to an envelope (guestAnswer) into the
// guest's response buffer, or answers -1 (the guest raises
// AmbiguousOutcome dispatch_outcome_unknown): after a dispatch, an answer
// that cannot be delivered leaves the outcome unknown.
func deliver(mem api.Memory, envelope []byte, ptr, capacity uint32) int32 {
	// An envelope is a JSON object; one that began with resultMark (only a
	// bug makes one) would be read as a result, and is not delivered.
	if len(envelope) == 0 || len(envelope) > MaxMessageBytes || envelope[0] == resultMark {
		return -1
	}
	answer := guestAnswer(envelope)
	if len(answer) > int(capacity) || !mem.Write(ptr, answer) {
		return -1
	}
	return int32(len(answer))
}

// resultMark begins an answer that is a completed call's result itself
// (guestAnswer). An envelope is a JSON object: '{' first, never this.
const resultMark = 0x00

// guestAnswer is what the guest is handed for an envelope: for a call the
// Broker completed with a result, resultMark and the result's canonical
// JSON, which the C module returns as they are; for every other envelope,
// the envelope, which the guest's _agent_runtime_wire.decode reads. The
// result's bytes are what decode would have returned for the envelope (a
// test checks it), found here in 0.9 us of Go (BenchmarkGuestAnswer)
// where decode took 7 us of a call's 50 in wasm.
func guestAnswer(envelope []byte) []byte {
	result, ok := completedResult(envelope)
	if !ok {
		return envelope
	}
	answer := make([]byte, 0, 1+len(result))
	return append(append(answer, resultMark), result...)
}

// completedResult returns the result of envelope when it is a completed
// call's with status "ok", as rpc.Completed writes it around
// broker.Response's wire form: strict JSON with only that document's
// names, and the result already canonical JSON, as the Broker writes it:
// the bytes decode makes of it. ok is false for anything else, which the
// guest decodes itself.
func completedResult(envelope []byte) (result []byte, ok bool) {
	body, ok := bytes.CutPrefix(envelope, []byte(`{"status":"completed","broker_response":`))
	if !ok {
		return nil, false
	}
	if trimmed, replayed := bytes.CutSuffix(body, []byte(`,"replayed":true}`)); replayed {
		body = trimmed
	} else if body, ok = bytes.CutSuffix(body, []byte(`}`)); !ok {
		return nil, false
	}
	inner, err := canonjson.Fields(body, MaxMessageBytes,
		"schema_version", "call_id", "status", "error_code", "message", "result", "receipt_id")
	if err != nil || inner[5] == nil {
		return nil, false
	}
	if status, _ := canonjson.String(inner[2]); status != "ok" {
		return nil, false
	}
	canon, err := canonjson.CanonicalValidated(inner[5]) // Fields validated it
	if err != nil || !bytes.Equal(canon, inner[5]) {
		return nil, false
	}
	return inner[5], true
}

func rejected(code, message string) []byte {
	env, _ := json.Marshal(struct {
		Status    string `json:"status"`
		ErrorCode string `json:"error_code"`
		Message   string `json:"message"`
	}{"rejected", code, message})
	return env
}
