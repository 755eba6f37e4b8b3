package callctx

import (
	"context"
	"testing"
)

type valueKey struct{}

// A dispatched handler's context keeps the call's values, outlives the
// caller's give-up and ends with the run.
func TestDispatchedOutlivesTheCallerNotTheRun(t *testing.T) {
	run, endRun := context.WithCancel(context.Background())
	defer endRun()
	call, giveUp := context.WithCancel(context.WithValue(run, valueKey{}, "v"))
	ctx, release := Dispatched(WithRun(call, run))
	defer release()
	giveUp()
	if ctx.Err() != nil {
		t.Fatalf("the caller's give-up ended the handler's context: %v", ctx.Err())
	}
	if ctx.Value(valueKey{}) != "v" {
		t.Error("the call's values are lost")
	}
	endRun()
	<-ctx.Done()
}

// Without a run, the call's context is the handler's.
func TestDispatchedWithoutARun(t *testing.T) {
	call, giveUp := context.WithCancel(context.Background())
	ctx, release := Dispatched(call)
	defer release()
	giveUp()
	if ctx.Err() == nil {
		t.Fatal("a call without a run: its end is the handler's")
	}
}

// release stops watching the run: nothing is left behind.
func TestReleaseStopsTheWatch(t *testing.T) {
	run, endRun := context.WithCancel(context.Background())
	ctx, release := Dispatched(WithRun(context.Background(), run))
	release()
	if ctx.Err() == nil {
		t.Fatal("release leaves the context live")
	}
	endRun()
}
