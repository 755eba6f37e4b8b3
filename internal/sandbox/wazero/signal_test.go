package wazero

import (
	"testing"

	"github.com/apysup/apysup/internal/sandbox"
)

// classify names a guest's own death by signal as the native backend
// does, and the contexts still decide first.
func TestClassifySignaled(t *testing.T) {
	for _, tc := range []struct {
		name   string
		end    guestEnd
		how    ending
		status sandbox.Status
		code   string
		exit   int
	}{
		{"term", guestEnd{kind: endSignaled, signal: 15}, ending{}, sandbox.StatusError, "killed_by_signal:SIGTERM", 143},
		{"abort", guestEnd{kind: endSignaled, signal: 6}, ending{}, sandbox.StatusError, "killed_by_signal:SIGABRT", 134},
		{"after a refused grow", guestEnd{kind: endSignaled, signal: 6}, ending{memoryRefused: true}, sandbox.StatusMemoryLimit, "", 134},
		{"while canceled", guestEnd{kind: endSignaled, signal: 9}, ending{canceled: true}, sandbox.StatusKilled, ErrorCodeCanceled, noExitStatus},
		{"while timed out", guestEnd{kind: endSignaled, signal: 15}, ending{timedOut: true}, sandbox.StatusTimeout, "", noExitStatus},
		{"a trap", guestEnd{kind: endTrapped}, ending{}, sandbox.StatusError, ErrorCodeTrap, noExitStatus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := sandbox.Outcome{ExitCode: noExitStatus} // as Run starts it
			classify(&out, tc.end, tc.how)
			if out.Status != tc.status || out.ErrorCode != tc.code || out.ExitCode != tc.exit {
				t.Fatalf("status %s code %q exit %d, want %s %q %d", out.Status, out.ErrorCode, out.ExitCode, tc.status, tc.code, tc.exit)
			}
		})
	}
}
