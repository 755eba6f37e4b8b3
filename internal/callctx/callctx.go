// Package callctx carries, in the context of one capability call, the
// context of the run the call belongs to, so that the Broker can tell the
// caller giving the call up from the run ending.
//
// A call's own context ends when its caller gives it up (the native
// bridge's connection closes, the wazero guest says so) or when the run
// ends. Before the dispatch commit point either means zero dispatch (an
// approval wait ends cancelled). After it the handler is running, and
// promised to run (SPEC section 5): a caller's give-up must not cut it
// short, only the run's end. The channels (internal/rpc for native runs,
// internal/sandbox/wazero for wazero runs) mark each call's context with
// its run's (WithRun); the Broker runs a dispatched handler under
// Dispatched's context.
package callctx

import "context"

type runKey struct{}

// WithRun returns ctx marked as a call of the run whose context is run.
func WithRun(ctx, run context.Context) context.Context {
	return context.WithValue(ctx, runKey{}, run)
}

// Dispatched returns the context a dispatched handler runs under, and its
// release: ctx's values, ended by the end of the run WithRun named, not by
// ctx's own end. A ctx that names no run is returned as it is: its end is
// the only one there is.
func Dispatched(ctx context.Context) (context.Context, context.CancelFunc) {
	run, ok := ctx.Value(runKey{}).(context.Context)
	if !ok || run == nil {
		return ctx, func() {}
	}
	detached, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(run, cancel)
	return detached, func() {
		stop()
		cancel()
	}
}
