package native

import (
	"errors"
	"io"
	"os"
)

// capture reads a pipe to its end, keeping at most limit bytes and
// discarding the rest through a fixed buffer, so a flooding guest costs the
// supervisor limit + 32 KiB of memory and never blocks on a full pipe.
type capture struct {
	r         *os.File
	limit     int
	buf       []byte
	truncated bool
	done      chan struct{}
}

func startCapture(r *os.File, limit int) *capture {
	c := &capture{r: r, limit: limit, done: make(chan struct{})}
	go c.run()
	return c
}

func (c *capture) run() {
	defer close(c.done)
	chunk := make([]byte, 32<<10)
	for {
		n, err := c.r.Read(chunk)
		if n > 0 {
			keep := min(n, c.limit-len(c.buf))
			c.buf = append(c.buf, chunk[:keep]...)
			if keep < n {
				c.truncated = true
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				c.truncated = true // a read error loses output: say so
			}
			return
		}
	}
}

// wait returns what was kept once the pipe reached its end.
func (c *capture) wait() ([]byte, bool) {
	<-c.done
	c.r.Close()
	return c.buf, c.truncated
}
