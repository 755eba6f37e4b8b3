package handlers

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/apysup/apysup/broker"
)

func TestBuiltin(t *testing.T) {
	at := time.UnixMilli(1_750_000_000_123)
	b := runBroker(t, Options{Now: func() time.Time { return at }},
		capability{name: "util.echo", kind: "builtin", id: "echo"},
		capability{name: "util.echo2", kind: "builtin", id: "echo", config: `{}`}, // same identity: one handler
		capability{name: "util.now", kind: "builtin", id: "clock.now"})
	tests := []struct {
		capability, args string
		status, code     string
		result           string
	}{
		{"util.echo", `{"a":[1,"x"]}`, "ok", "", `{"echo":{"a":[1,"x"]}}`},
		{"util.echo2", `{}`, "ok", "", `{"echo":{}}`},
		{"util.now", `{}`, "ok", "", `{"unix_ms":1750000000123}`},
		{"util.now", `{"tz":"UTC"}`, "error", "handler_error", ``},
	}
	for i, tc := range tests {
		r := brokerCall(t, b, i+1, tc.capability, tc.args)
		if r.Status != tc.status || r.ErrorCode != tc.code || (tc.result != "" && string(r.Result) != tc.result) {
			t.Errorf("%s %s: got %s %s %s", tc.capability, tc.args, r.Status, r.ErrorCode, r.Result)
		}
	}
}

func TestClockNowCodes(t *testing.T) {
	h := handlerOf(t, Options{}, capability{name: "util.now", kind: "builtin", id: "clock.now"}).(broker.Handler)
	if _, err := h.Call(context.Background(), json.RawMessage(`{"x":1}`)); CodeOf(err) != CodeBadArguments {
		t.Errorf("arguments: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Call(ctx, json.RawMessage(`{}`)); CodeOf(err) != CodeCancelled || ctx.Err() == nil {
		t.Errorf("cancelled: %v", err)
	}
	out, err := h.Call(context.Background(), json.RawMessage(`{}`))
	var v struct {
		UnixMS int64 `json:"unix_ms"`
	}
	if err != nil || json.Unmarshal(out, &v) != nil || v.UnixMS <= 0 {
		t.Errorf("real clock: %s %v", out, err)
	}
}
