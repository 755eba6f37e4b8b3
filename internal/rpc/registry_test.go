package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apysup/apysup/broker"
)

type testChannel struct {
	reg  *Registry
	ch   *Channel
	cred []byte
	b    *fakeBroker
	now  *time.Time
}

const testUID = 1000

func openTest(t *testing.T, limits ChannelLimits) *testChannel {
	t.Helper()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tc := &testChannel{b: newFakeBroker(), now: &now}
	var mu sync.Mutex
	tc.reg = NewRegistry(RegistryConfig{Now: func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return *tc.now
	}})
	ch, cred, err := tc.reg.Open(ChannelConfig{
		ChannelID: "ch-1", InvocationID: "inv-1", ExecutionID: "run-1", PlanSHA256: testPlan,
		Expiry: now.Add(time.Minute), PeerUID: testUID, Dispatcher: tc.b, Limits: limits,
	})
	if err != nil {
		t.Fatal(err)
	}
	tc.ch, tc.cred = ch, cred
	t.Cleanup(func() {
		select {
		case <-tc.b.release:
		default:
			close(tc.b.release)
		}
		_ = tc.reg.Close("ch-1")
	})
	return tc
}

func envelopeFor(frame string) []byte {
	return []byte(`{"schema_version":"apysup.rpc.v1","channel_id":"ch-1","invocation_id":"inv-1","execution_id":"run-1","plan_sha256":"` + testPlan + `","call":` + frame + `}`)
}

func frame(id, capability, args string) string {
	return fmt.Sprintf(`{"call_id":%q,"capability":%q,"arguments":%s}`, id, capability, args)
}

func (tc *testChannel) dispatch(body []byte) (int, string) {
	status, resp := tc.reg.Dispatch(context.Background(), testUID, tc.cred, body)
	return status, string(resp)
}

type response struct {
	Status         string          `json:"status"`
	ErrorCode      string          `json:"error_code"`
	BrokerResponse json.RawMessage `json:"broker_response"`
	Replayed       bool            `json:"replayed"`
}

func decodeResponse(t *testing.T, body string) response {
	t.Helper()
	var r response
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("response %q: %v", body, err)
	}
	return r
}

func TestDispatchCompletesThenReplays(t *testing.T) {
	tc := openTest(t, ChannelLimits{})
	env := envelopeFor(frame("capability-1", "echo.say", `{"a":1}`))
	status, body := tc.dispatch(env)
	first := decodeResponse(t, body)
	if status != http.StatusOK || first.Status != StatusCompleted || first.Replayed {
		t.Fatalf("%d %s", status, body)
	}
	// The same call, differently spelled, is the same request digest.
	status, body = tc.dispatch(envelopeFor(`{ "arguments" : {"a":1.0}, "capability":"echo.say", "call_id":"capability-1" }`))
	again := decodeResponse(t, body)
	if status != http.StatusOK || !again.Replayed || !bytes.Equal(again.BrokerResponse, first.BrokerResponse) {
		t.Fatalf("%d %s", status, body)
	}
	if n := tc.b.count("capability-1"); n != 1 {
		t.Fatalf("%d dispatches", n)
	}
}

// The Broker sees the guest's frame bytes unchanged.
func TestDispatchForwardsFrameBytes(t *testing.T) {
	tc := openTest(t, ChannelLimits{})
	var got []byte
	tc.ch.cfg.Dispatcher = dispatcherFunc(func(_ context.Context, f []byte) *broker.Response {
		got = bytes.Clone(f)
		return &broker.Response{Status: "ok", Result: json.RawMessage(`1`)}
	})
	f := `{"call_id" : "capability-1", "capability":"echo.say","arguments":{"x":1E2}}`
	if status, body := tc.dispatch(envelopeFor(f)); status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	if string(got) != f {
		t.Fatalf("broker got %q", got)
	}
}

type dispatcherFunc func(context.Context, []byte) *broker.Response

func (f dispatcherFunc) Call(ctx context.Context, frame []byte) *broker.Response {
	return f(ctx, frame)
}

func TestDispatchIdentityMismatch(t *testing.T) {
	tc := openTest(t, ChannelLimits{})
	tc.dispatch(envelopeFor(frame("capability-1", "echo.say", `{"a":1}`)))
	for _, f := range []string{
		frame("capability-1", "echo.say", `{"a":2}`),
		frame("capability-1", "echo.other", `{"a":1}`),
	} {
		status, body := tc.dispatch(envelopeFor(f))
		if status != http.StatusConflict || body != `{"status":"rejected","error_code":"call_identity_mismatch"}` {
			t.Fatalf("%d %s", status, body)
		}
	}
	if tc.b.total() != 1 {
		t.Fatalf("%d dispatches", tc.b.total())
	}
}

// 50 concurrent copies of one call: exactly one dispatch; every other copy
// is told the call is in flight or gets the replay.
func TestDispatchConcurrentDuplicates(t *testing.T) {
	tc := openTest(t, ChannelLimits{MaxConcurrent: 64})
	env := envelopeFor(frame("capability-1", "fault.block", `{}`))
	const copies = 50
	results := make(chan response, copies)
	var wg sync.WaitGroup
	for range copies {
		wg.Go(func() {
			status, body := tc.dispatch(env)
			if status != http.StatusOK {
				t.Errorf("%d %s", status, body)
			}
			results <- decodeResponse(t, body)
		})
	}
	<-tc.b.entered
	close(tc.b.release)
	wg.Wait()
	close(results)
	var fresh, inFlight, replayed int
	for r := range results {
		switch {
		case r.Status == StatusCompleted && !r.Replayed:
			fresh++
		case r.Status == StatusCompleted && r.Replayed:
			replayed++
		case r.Status == StatusAmbiguous && r.ErrorCode == CodeCallInFlight:
			inFlight++
		default:
			t.Errorf("unexpected %+v", r)
		}
	}
	if fresh != 1 || fresh+replayed+inFlight != copies || tc.b.count("capability-1") != 1 {
		t.Fatalf("fresh %d replayed %d in flight %d, dispatches %d", fresh, replayed, inFlight, tc.b.count("capability-1"))
	}
}

func TestDispatchUnauthenticated(t *testing.T) {
	good := envelopeFor(frame("capability-1", "echo.say", `{}`))
	swap := func(old, new string) func(*testChannel) ([]byte, []byte, uint32) {
		return func(tc *testChannel) ([]byte, []byte, uint32) {
			return bytes.Replace(good, []byte(old), []byte(new), 1), tc.cred, testUID
		}
	}
	cases := map[string]func(tc *testChannel) (body, cred []byte, uid uint32){
		"wrong credential": func(tc *testChannel) ([]byte, []byte, uint32) {
			c := bytes.Clone(tc.cred)
			c[31] ^= 1
			return good, c, testUID
		},
		"short credential":    func(tc *testChannel) ([]byte, []byte, uint32) { return good, tc.cred[:31], testUID },
		"no credential":       func(tc *testChannel) ([]byte, []byte, uint32) { return good, nil, testUID },
		"unknown channel":     swap(`"ch-1"`, `"ch-2"`),
		"wrong invocation id": swap(`"inv-1"`, `"inv-2"`),
		"wrong execution id":  swap(`"run-1"`, `"run-2"`),
		"wrong plan digest":   swap(testPlan, "sha256:"+strings.Repeat("3", 64)),
		"wrong peer uid":      func(tc *testChannel) ([]byte, []byte, uint32) { return good, tc.cred, testUID + 1 },
		"expired": func(tc *testChannel) ([]byte, []byte, uint32) {
			*tc.now = tc.now.Add(time.Minute)
			return good, tc.cred, testUID
		},
		"revoked": func(tc *testChannel) ([]byte, []byte, uint32) {
			if err := tc.reg.Revoke("ch-1"); err != nil {
				t.Fatal(err)
			}
			return good, tc.cred, testUID
		},
		"closed": func(tc *testChannel) ([]byte, []byte, uint32) {
			if err := tc.reg.Close("ch-1"); err != nil {
				t.Fatal(err)
			}
			return good, tc.cred, testUID
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			tc := openTest(t, ChannelLimits{})
			body, cred, uid := mk(tc)
			status, resp := tc.reg.Dispatch(context.Background(), uid, cred, body)
			if status != http.StatusUnauthorized || string(resp) != `{"status":"rejected","error_code":"unauthenticated"}` {
				t.Fatalf("%d %s", status, resp)
			}
			if tc.b.total() != 0 {
				t.Fatalf("%d dispatches", tc.b.total())
			}
		})
	}
}

func TestDispatchConcurrencyLimit(t *testing.T) {
	tc := openTest(t, ChannelLimits{MaxConcurrent: 1})
	done := make(chan int)
	go func() {
		status, _ := tc.dispatch(envelopeFor(frame("capability-1", "fault.block", `{}`)))
		done <- status
	}()
	<-tc.b.entered
	status, body := tc.dispatch(envelopeFor(frame("capability-2", "echo.say", `{}`)))
	if status != http.StatusTooManyRequests || body != `{"status":"rejected","error_code":"too_many_concurrent"}` {
		t.Fatalf("%d %s", status, body)
	}
	close(tc.b.release)
	if s := <-done; s != http.StatusOK {
		t.Fatalf("held call: %d", s)
	}
	// The slot is free again, and capability-2 was never recorded.
	if status, body := tc.dispatch(envelopeFor(frame("capability-2", "echo.say", `{}`))); status != http.StatusOK || strings.Contains(body, "replayed") {
		t.Fatalf("%d %s", status, body)
	}
}

func TestDispatchCallTableBounds(t *testing.T) {
	t.Run("count", func(t *testing.T) {
		tc := openTest(t, ChannelLimits{MaxCalls: 2})
		for _, id := range []string{"capability-1", "capability-2"} {
			if status, body := tc.dispatch(envelopeFor(frame(id, "echo.say", `{}`))); status != 200 {
				t.Fatalf("%d %s", status, body)
			}
		}
		status, body := tc.dispatch(envelopeFor(frame("capability-3", "echo.say", `{}`)))
		if status != http.StatusTooManyRequests || body != `{"status":"rejected","error_code":"call_table_full"}` {
			t.Fatalf("%d %s", status, body)
		}
		if _, body := tc.dispatch(envelopeFor(frame("capability-2", "echo.say", `{}`))); !strings.Contains(body, `"replayed":true`) {
			t.Fatalf("known ids still replay: %s", body)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		tc := openTest(t, ChannelLimits{MaxCachedBytes: 100})
		tc.dispatch(envelopeFor(frame("capability-1", "echo.say", `{"s":"`+strings.Repeat("x", 100)+`"}`)))
		status, body := tc.dispatch(envelopeFor(frame("capability-2", "echo.say", `{}`)))
		if status != http.StatusTooManyRequests || !strings.Contains(body, CodeCallTableFull) {
			t.Fatalf("%d %s", status, body)
		}
	})
}

// A panic or no answer: the handler may have acted, so the outcome is
// ambiguous and the id stays in flight, never re-dispatched.
func TestDispatchUnknownOutcomeStaysInFlight(t *testing.T) {
	for _, capability := range []string{"fault.panic", "fault.empty"} {
		t.Run(capability, func(t *testing.T) {
			tc := openTest(t, ChannelLimits{})
			env := envelopeFor(frame("capability-1", capability, `{}`))
			for _, want := range []string{CodeDispatchUnknown, CodeCallInFlight, CodeCallInFlight} {
				status, body := tc.dispatch(env)
				if status != http.StatusOK || body != `{"status":"ambiguous","error_code":"`+want+`"}` {
					t.Fatalf("%d %s, want %s", status, body, want)
				}
			}
			if tc.b.total() != 1 {
				t.Fatalf("%d dispatches", tc.b.total())
			}
		})
	}
}

// Revoke cancels a dispatch in progress; Close waits for it to return.
func TestRevokeAndCloseEndDispatches(t *testing.T) {
	tc := openTest(t, ChannelLimits{})
	done := make(chan string)
	go func() {
		_, body := tc.dispatch(envelopeFor(frame("capability-1", "fault.block", `{}`)))
		done <- body
	}()
	<-tc.b.entered
	if err := tc.reg.Revoke("ch-1"); err != nil {
		t.Fatal(err)
	}
	// The fake broker answers a cancelled wait with status "error".
	if body := <-done; !strings.Contains(body, `"error_code":"cancelled"`) {
		t.Fatalf("body %s", body)
	}
	if err := tc.reg.Close("ch-1"); err != nil {
		t.Fatal(err)
	}
	if err := tc.reg.Close("ch-1"); !errors.Is(err, ErrUnknownChannel) {
		t.Fatalf("second close: %v", err)
	}
	if err := tc.reg.Revoke("ch-1"); !errors.Is(err, ErrUnknownChannel) {
		t.Fatalf("revoke after close: %v", err)
	}
}

func TestDispatchContextIsNotTheRequests(t *testing.T) {
	tc := openTest(t, ChannelLimits{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	status, body := tc.reg.Dispatch(ctx, testUID, tc.cred, envelopeFor(frame("capability-1", "echo.say", `{}`)))
	if status != 200 || !strings.Contains(string(body), `"status":"completed"`) {
		t.Fatalf("%d %s", status, body)
	}
}

func TestOpenValidates(t *testing.T) {
	reg := NewRegistry(RegistryConfig{})
	good := ChannelConfig{ChannelID: "c", InvocationID: "i", ExecutionID: "r", PlanSHA256: testPlan,
		Expiry: time.Now().Add(time.Hour), Dispatcher: newFakeBroker()}
	bad := []func(*ChannelConfig){
		func(c *ChannelConfig) { c.ChannelID = "" },
		func(c *ChannelConfig) { c.InvocationID = strings.Repeat("i", 257) },
		func(c *ChannelConfig) { c.ExecutionID = "" },
		func(c *ChannelConfig) { c.PlanSHA256 = "sha256:abc" },
		func(c *ChannelConfig) { c.Expiry = time.Now().Add(-time.Second) },
		func(c *ChannelConfig) { c.Dispatcher = nil },
	}
	for i, mutate := range bad {
		cfg := good
		mutate(&cfg)
		if _, _, err := reg.Open(cfg); !errors.Is(err, ErrInvalidChannel) {
			t.Errorf("case %d: %v", i, err)
		}
	}
	_, c1, err := reg.Open(good)
	if err != nil || len(c1) != CredentialBytes {
		t.Fatal(err)
	}
	if _, _, err := reg.Open(good); !errors.Is(err, ErrChannelExists) {
		t.Fatalf("duplicate open: %v", err)
	}
	good.ChannelID = "c2"
	_, c2, err := reg.Open(good)
	if err != nil || bytes.Equal(c1, c2) {
		t.Fatalf("credentials must be fresh: %v", err)
	}
	if reg.Close("c") != nil || reg.Close("c2") != nil {
		t.Fatal("close")
	}
}

func TestSecretsDoNotPrint(t *testing.T) {
	tc := openTest(t, ChannelLimits{})
	f := NewChannelFile(tc.ch, "/run/apysup/rpc.sock", tc.cred)
	secret := f.Credential
	for _, s := range []string{
		fmt.Sprint(tc.ch), fmt.Sprintf("%+v", tc.ch), fmt.Sprintf("%#v", tc.ch),
		fmt.Sprint(f), fmt.Sprintf("%+v", f), fmt.Sprintf("%#v", f), fmt.Sprintf("%v", &f),
	} {
		if strings.Contains(s, secret) || strings.Contains(s, fmt.Sprint(tc.cred)) || strings.Contains(s, fmt.Sprintf("%x", tc.cred)) {
			t.Fatalf("credential printed: %s", s)
		}
	}
}

// A call the Broker refused at admission (status "refused": no receipt, id
// not spent) is forgotten, so the same id can carry a valid call next, as
// it can when the guest calls the Broker directly (the wazero backend).
func TestDispatchForgetsRefusedCalls(t *testing.T) {
	tc := openTest(t, ChannelLimits{})
	calls := 0
	tc.ch.cfg.Dispatcher = dispatcherFunc(func(_ context.Context, f []byte) *broker.Response {
		calls++
		if strings.Contains(string(f), `"arguments":[1]`) {
			return &broker.Response{Status: "refused", ErrorCode: "arguments_not_object"}
		}
		return &broker.Response{Status: "ok", Result: json.RawMessage(`1`)}
	})
	status, body := tc.dispatch(envelopeFor(frame("capability-1", "echo.say", `[1]`)))
	if status != http.StatusOK || !strings.Contains(body, "arguments_not_object") {
		t.Fatalf("%d %s", status, body)
	}
	status, body = tc.dispatch(envelopeFor(frame("capability-1", "echo.say", `{"a":1}`)))
	if r := decodeResponse(t, body); status != http.StatusOK || r.Status != StatusCompleted || r.Replayed || calls != 2 {
		t.Fatalf("%d %s after %d calls", status, body, calls)
	}
	// A completed call is still remembered: its repeat replays.
	status, body = tc.dispatch(envelopeFor(frame("capability-1", "echo.say", `{"a":1}`)))
	if r := decodeResponse(t, body); !r.Replayed || calls != 2 {
		t.Fatalf("%d %s after %d calls", status, body, calls)
	}
}
