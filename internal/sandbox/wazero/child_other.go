//go:build !linux

package wazero

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"time"

	"github.com/apysup/apysup/internal/sandbox"
)

// childSupported: no child process here (it needs Linux's parent-death
// signal and waitid); every guest runs in-process, ended by wazero's
// close-on-context-done.
const childSupported = false

func (b *Backend) runChild(context.Context, *runClock, guestJob, *sandbox.Capture, *sandbox.Outcome, *func()) (guestRun, ending, error) {
	return guestRun{}, ending{}, errors.New("no child processes on this OS")
}

func newImage(fs.FS) (*os.File, error) {
	return nil, errors.New("no child processes on this OS")
}

// childPool: no children to keep here.
type childPool struct{}

func newChildPool(*Interpreter, int, time.Duration) *childPool { return nil }

func (*childPool) close() {}

func (*childPool) state() PoolState { return PoolState{} }
