package native

import (
	"errors"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/apysup/apysup/internal/sandbox"
)

// capture reads a pipe to its end into one stream of a sandbox.Capture,
// which keeps at most the stream's limit and discards the rest, so a
// flooding guest costs the supervisor that limit + 32 KiB of memory and
// never blocks on a full pipe (nor on the job's Output).
type capture struct {
	r    *os.File
	done chan struct{}
}

func startCapture(r *os.File, into *sandbox.Capture, stream string) *capture {
	c := &capture{r: r, done: make(chan struct{})}
	go c.run(into, stream)
	return c
}

func (c *capture) run(into *sandbox.Capture, stream string) {
	defer close(c.done)
	w := into.Writer(stream)
	chunk := make([]byte, 32<<10)
	for {
		n, err := c.r.Read(chunk)
		if n > 0 {
			w.Write(chunk[:n])
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			err = c.rest(w, chunk) // drain: every writer is gone
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				into.Lost(stream) // a read error loses output: say so
			}
			return
		}
	}
}

// rest reads what the pipe holds without waiting, to EOF or to an empty
// pipe, which is its end once no process of the guest is left to write
// (drain): a copy of the write end that outlives them, sent in flight into
// a Unix socket, would hold EOF off for as long as the socket lives.
func (c *capture) rest(w io.Writer, chunk []byte) error {
	raw, err := c.r.SyscallConn()
	if err != nil {
		return err
	}
	var readErr error
	if err := raw.Control(func(fd uintptr) {
		for { // the descriptor is non-blocking: os.Pipe's are polled
			n, err := unix.Read(int(fd), chunk)
			if n > 0 {
				w.Write(chunk[:n])
			}
			switch {
			case err == unix.EINTR:
				continue
			case err == unix.EAGAIN || (err == nil && n == 0):
				return // empty, or EOF: the end either way
			case err != nil:
				readErr = err
				return
			}
		}
	}); err != nil {
		return err
	}
	if readErr != nil {
		return readErr
	}
	return io.EOF
}

// drain ends the capture with what the pipe holds now. Only once no
// process of the guest is left: a writer still running would lose what it
// writes after.
func (c *capture) drain() {
	_ = c.r.SetReadDeadline(time.Now()) // the read in run returns, then rest reads on
}

// ended reports whether the capture has reached its end.
func (c *capture) ended() <-chan struct{} { return c.done }

// wait returns once the capture reached its end.
func (c *capture) wait() {
	<-c.done
	c.r.Close()
}
