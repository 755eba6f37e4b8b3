package native

import (
	"errors"
	"io"
	"os"

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
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				into.Lost(stream) // a read error loses output: say so
			}
			return
		}
	}
}

// wait returns once the pipe reached its end.
func (c *capture) wait() {
	<-c.done
	c.r.Close()
}
