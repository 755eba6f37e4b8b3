package report

import (
	"io"
	"unicode/utf8"
)

// The guest's streams, as a run's output and a server's events name them
// (sandbox.Stdout and sandbox.Stderr).
const (
	Stdout = "stdout"
	Stderr = "stderr"
)

// Streams passes the guest's stdout and stderr to the user's as the guest
// writes them (a run's sandbox.Output). On a terminal the text is escaped
// (GuestLines: a hostile script must not drive the terminal); into a pipe
// or a file it passes byte for byte.
type Streams struct {
	out, err guestWriter
}

// NewStreams writes the guest's stdout to stdout and its stderr to
// stderr, escaping on those that are terminals.
func NewStreams(stdout io.Writer, stdoutTerminal bool, stderr io.Writer, stderrTerminal bool) *Streams {
	return &Streams{out: guestWriter{w: stdout, terminal: stdoutTerminal}, err: guestWriter{w: stderr, terminal: stderrTerminal}}
}

// Output writes a chunk of the guest's stream (Stdout or Stderr).
func (g *Streams) Output(stream string, chunk []byte) {
	if stream == Stderr {
		g.err.write(chunk)
	} else {
		g.out.write(chunk)
	}
}

// End writes what is held back and ends each stream that wrote anything
// with a newline, so that the summary starts on a line of its own.
func (g *Streams) End() {
	g.out.end()
	g.err.end()
}

// guestWriter is one guest stream on its way to the user. On a terminal
// it holds back an incomplete UTF-8 sequence at the end of a chunk until
// the next chunk completes it, so that a character split by a pipe read
// is not escaped as broken bytes.
type guestWriter struct {
	w        io.Writer
	terminal bool
	held     []byte
	wrote    bool
	last     byte
}

func (g *guestWriter) write(chunk []byte) {
	if len(chunk) == 0 {
		return
	}
	g.wrote, g.last = true, chunk[len(chunk)-1]
	if !g.terminal {
		g.w.Write(chunk)
		return
	}
	text := append(g.held, chunk...)
	cut := len(text)
	for i := len(text) - 1; i >= 0 && i >= len(text)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(text[i]) {
			if !utf8.FullRune(text[i:]) {
				cut = i
			}
			break
		}
	}
	g.held = append([]byte(nil), text[cut:]...)
	io.WriteString(g.w, GuestLines(string(text[:cut])))
}

func (g *guestWriter) end() {
	if len(g.held) > 0 {
		io.WriteString(g.w, GuestLines(string(g.held)))
		g.held = nil
	}
	if g.wrote && g.last != '\n' {
		io.WriteString(g.w, "\n")
	}
}
