package main

import (
	"io"
	"sync"
	"unicode/utf8"

	"github.com/apysup/apysup/internal/sandbox"
)

// guestStreams passes the guest's stdout and stderr to the user's as the
// guest writes them (a run's sandbox.Output). On a terminal the text is
// escaped (guestLines: a hostile script must not drive the terminal);
// into a pipe or a file it passes byte for byte.
type guestStreams struct {
	out, err guestWriter
}

func newGuestStreams(stdout io.Writer, stdoutTerminal bool, stderr io.Writer, stderrTerminal bool) *guestStreams {
	return &guestStreams{out: guestWriter{w: stdout, terminal: stdoutTerminal}, err: guestWriter{w: stderr, terminal: stderrTerminal}}
}

// Output is the run's sandbox.Output.
func (g *guestStreams) Output(stream string, chunk []byte) {
	if stream == sandbox.Stderr {
		g.err.write(chunk)
	} else {
		g.out.write(chunk)
	}
}

// end writes what is held back and ends each stream that wrote anything
// with a newline, so that the summary starts on a line of its own.
func (g *guestStreams) end() {
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
	io.WriteString(g.w, guestLines(string(text[:cut])))
}

func (g *guestWriter) end() {
	if len(g.held) > 0 {
		io.WriteString(g.w, guestLines(string(g.held)))
		g.held = nil
	}
	if g.wrote && g.last != '\n' {
		io.WriteString(g.w, "\n")
	}
}

// lockedWriter serialises writes from the guest's stream, the approval
// prompt and progress notes to one stream of the user's.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
