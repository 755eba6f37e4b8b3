package broker

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/apysup/apysup/internal/callctx"
	"github.com/apysup/apysup/plan"
)

// A handler dispatched for a caller that then gives the call up runs to
// its end (its receipt ok), where it used to see its context end
// (handler_error under wazero); the run's end still ends it.
func TestDispatchedHandlerOutlivesTheCaller(t *testing.T) {
	started := make(chan struct{}, 1)
	slow := HandlerFunc(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		started <- struct{}{}
		select {
		case <-time.After(100 * time.Millisecond):
			return json.RawMessage(`{"slept":true}`), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	r, err := plan.NewRegistry(4)
	if err != nil {
		t.Fatal(err)
	}
	hs := NewHandlers()
	if err := hs.Add(handlerID(t, "slow"), slow); err != nil {
		t.Fatal(err)
	}
	obj := json.RawMessage(`{"type":"object"}`)
	if err := r.Register(plan.Spec{Name: "slow", Version: "1", Effect: plan.EffectRead, Playback: plan.PlaybackLive,
		Handler: handlerID(t, "slow"), InputSchema: obj, OutputSchema: obj}); err != nil {
		t.Fatal(err)
	}
	g, err := plan.NewGrant(json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Bind("slow", g); err != nil {
		t.Fatal(err)
	}
	p, err := r.Seal()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name         string
		endRun       bool
		status, code string
	}{
		{"caller gives up", false, StatusOK, ""},
		{"run ends", true, StatusError, CodeHandlerError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := New(Config{Plan: p, RunID: "run-1", Surface: plan.SurfaceDirect, Handlers: hs})
			if err != nil {
				t.Fatal(err)
			}
			run, endRun := context.WithCancel(context.Background())
			defer endRun()
			call, giveUp := context.WithCancel(run)
			go func() {
				<-started
				giveUp()
				if tc.endRun {
					endRun()
				}
			}()
			got := decode(t, b.Call(callctx.WithRun(call, run), frameOf("capability-1", "slow", `{}`)))
			if got.Status != tc.status || got.ErrorCode != tc.code {
				t.Fatalf("%+v, want %s %s", got, tc.status, tc.code)
			}
		})
	}
}
