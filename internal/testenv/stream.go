package testenv

import (
	"bytes"
	"context"
	"strings"
	"sync"
)

// StreamingScript prints a line on each stream, then sleeps far past any
// test's patience: a run of it ends early only if its first lines reached
// the run's Output while it slept (a StreamRecorder cancels it then).
const StreamingScript = "import sys, time\nprint('first')\nsys.stderr.write('warn\\n')\ntime.sleep(600)\nprint('never')\n"

// StreamRecorder is a run's Output (sandbox.Output) for tests of output
// streaming: it records what it receives and cancels the run once both
// of StreamingScript's lines have arrived. A run that then ends canceled
// proves the order "delivered, then ended" without a clock.
type StreamRecorder struct {
	mu     sync.Mutex
	got    map[string]*bytes.Buffer
	cancel context.CancelFunc
	done   bool
}

// NewStreamRecorder returns a recorder that calls cancel when both lines arrived.
func NewStreamRecorder(cancel context.CancelFunc) *StreamRecorder {
	return &StreamRecorder{cancel: cancel, got: map[string]*bytes.Buffer{"stdout": {}, "stderr": {}}}
}

// Output records one chunk of stream ("stdout" or "stderr").
func (r *StreamRecorder) Output(stream string, chunk []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got[stream].Write(chunk)
	if !r.done && strings.HasPrefix(r.got["stdout"].String(), "first\n") && strings.HasPrefix(r.got["stderr"].String(), "warn\n") {
		r.done = true
		r.cancel()
	}
}

// Got returns what was delivered of each stream.
func (r *StreamRecorder) Got() (stdout, stderr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got["stdout"].String(), r.got["stderr"].String()
}
