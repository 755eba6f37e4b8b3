package wazero

import (
	"context"
	"io/fs"
	"sync"
	"time"
)

// runClock is a run's timer. It starts when the runner opens its job (the
// argv file, read before the prelude and the script): the point where the
// native backend hands the job to an interpreter it has started, and starts
// its timer. The interpreter's own start (instantiating the module,
// CPython's initialisation: 0.15 s of CPU with -race, seconds on a loaded
// host) is no more the script's time here than the container's start is
// there. A start that has not reached the job within the timeout ends the
// run all the same, so a run lasts at most twice its timeout.
type runClock struct {
	ctx     context.Context
	cancel  context.CancelCauseFunc
	timeout time.Duration
	timer   *time.Timer
	mu      sync.Mutex
	started bool
}

func newRunClock(parent context.Context, timeout time.Duration) *runClock {
	c := &runClock{timeout: timeout}
	c.ctx, c.cancel = context.WithCancelCause(parent)
	c.timer = time.AfterFunc(timeout, func() { c.cancel(context.DeadlineExceeded) })
	return c
}

// start gives the run its whole timeout from now, once.
func (c *runClock) start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started {
		c.started = true
		c.timer.Reset(c.timeout)
	}
}

// bound sets how long the run may take to reach its job from now, unless
// it has: a child's Load, then its guest's start, each has its own bound.
func (c *runClock) bound(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started {
		c.timer.Reset(d)
	}
}

func (c *runClock) stop() {
	c.timer.Stop()
	c.cancel(context.Canceled)
}

// openWatch calls opened whenever the file name of FS is opened or stat'ed
// (wazero's adapter stats by opening).
type openWatch struct {
	fs.FS
	name   string
	opened func()
}

func (w openWatch) Open(name string) (fs.File, error) {
	if name == w.name {
		w.opened()
	}
	return w.FS.Open(name)
}
