package sandbox

import (
	"io"
	"sync"
)

// Names of the guest's output streams, as an Output receives them (and as
// `apysup serve` names its events).
const (
	Stdout = "stdout"
	Stderr = "stderr"
)

// Output receives the guest's output while it runs: stream is Stdout or
// Stderr, chunk the next bytes of that stream (never empty; the caller may
// keep it but must not change it). Calls come from one goroutine, one at a
// time, in order within each stream (across the two streams the order is
// as near to the guest's as two pipes allow); together they are exactly
// the bytes the Outcome keeps, so never more than the run's OutputBytes
// per stream. The guest never waits for an Output: what it writes is kept
// and handed over by a goroutine of its own, so a slow Output delays
// nothing but itself. The run returns after the last call has returned.
type Output func(stream string, chunk []byte)

// Capture keeps the first limit bytes of each of a run's two streams,
// notes whether more came, and hands what it keeps to an Output as it
// arrives. Its writers never fail and never block on the Output (the guest
// cannot tell it was cut off, nor be held by a slow reader); its memory is
// the kept bytes, at most 2 x limit, whatever the Output does.
type Capture struct {
	limit int
	mu    sync.Mutex
	kept  [2][]byte // stdout, stderr; only ever appended to
	trunc [2]bool
	sent  [2]int // bytes of kept handed to the Output
	wake  chan struct{}
	done  chan struct{} // closed when the delivery goroutine returned; nil without one
	ended bool
}

// NewCapture returns a Capture keeping limit bytes per stream.
func NewCapture(limit int) *Capture {
	return &Capture{limit: max(limit, 0), wake: make(chan struct{}, 1)}
}

var streamNames = [2]string{Stdout, Stderr}

// Writer returns the writer of stream (Stdout or Stderr).
func (c *Capture) Writer(stream string) io.Writer { return captureWriter{c, index(stream)} }

type captureWriter struct {
	c *Capture
	i int
}

func (w captureWriter) Write(p []byte) (int, error) {
	w.c.write(w.i, p)
	return len(p), nil
}

func (c *Capture) write(i int, p []byte) {
	c.mu.Lock()
	keep := min(len(p), c.limit-len(c.kept[i]))
	c.kept[i] = append(c.kept[i], p[:keep]...)
	if keep < len(p) {
		c.trunc[i] = true
	}
	c.mu.Unlock()
	if keep > 0 {
		select {
		case c.wake <- struct{}{}:
		default: // a wake-up is pending already
		}
	}
}

// Lost notes that output of stream was lost (a read error): the stream is
// reported truncated.
func (c *Capture) Lost(stream string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trunc[index(stream)] = true
}

func index(stream string) int {
	if stream == Stderr {
		return 1
	}
	return 0
}

// Deliver starts handing what is kept, from the first byte, to out. A nil
// out, a second Deliver or one after Close does nothing.
func (c *Capture) Deliver(out Output) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if out == nil || c.done != nil || c.ended {
		return
	}
	c.done = make(chan struct{})
	go c.deliver(out)
}

func (c *Capture) deliver(out Output) {
	defer close(c.done)
	for {
		<-c.wake
		for {
			c.mu.Lock()
			var next [2][]byte
			for i := range next {
				// kept only grows: the bytes below its length never change.
				next[i] = c.kept[i][c.sent[i]:len(c.kept[i]):len(c.kept[i])]
				c.sent[i] = len(c.kept[i])
			}
			ended := c.ended
			c.mu.Unlock()
			if len(next[0]) == 0 && len(next[1]) == 0 {
				if ended {
					return
				}
				break
			}
			for i, chunk := range next {
				if len(chunk) > 0 {
					out(streamNames[i], chunk)
				}
			}
		}
	}
}

// Close ends the Capture once its writers are done: what is kept is
// delivered, and Close returns after the Output's last call. It is safe
// twice.
func (c *Capture) Close() {
	c.mu.Lock()
	c.ended = true
	done := c.done
	c.mu.Unlock()
	if done == nil {
		return
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
	<-done
}

// Kept returns what each stream kept and whether more was written.
func (c *Capture) Kept() (stdout, stderr []byte, stdoutTruncated, stderrTruncated bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kept[0], c.kept[1], c.trunc[0], c.trunc[1]
}
