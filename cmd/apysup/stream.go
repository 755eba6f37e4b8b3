package main

import (
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

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

// brokenPipe is what `apysup run` does when the reader of its stdout or
// stderr goes away (`apysup run s.py | head -1`). Go would end the process
// by SIGPIPE at its next write to either, mid-run, leaving the run's
// sandbox, mounts and directories behind. Instead a write that finds the
// pipe broken cancels the run (cancel), the run is torn down as any
// cancelled run is, and the process then ends by SIGPIPE as a Unix tool
// does (die: 141 in a shell).
type brokenPipe struct {
	mu     sync.Mutex
	cancel func()
	broken bool
	file   *os.File // the broken stream, when it is a file (os.Stdout, os.Stderr)
}

// sawBrokenPipe is set once a run's output found its pipe broken; main
// reads it after every deferred teardown of the command has run.
var sawBrokenPipe brokenPipe

// watch makes writes to a broken pipe fail with EPIPE instead of ending
// the process, and has such a failure call cancel.
func (b *brokenPipe) watch(cancel func()) {
	failBrokenPipes()
	b.mu.Lock()
	b.cancel = cancel
	b.mu.Unlock()
}

// failBrokenPipes makes a write to a broken stdout or stderr fail with
// EPIPE, where Go's runtime would end the process by SIGPIPE. A notified
// signal's handler is reset at exec, so the processes this one starts
// (sandboxes, wazero children) still get the default.
func failBrokenPipes() {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}

// writer is w, whose EPIPE cancels the run.
func (b *brokenPipe) writer(w io.Writer) io.Writer { return pipeWriter{w: w, b: b} }

func (b *brokenPipe) saw() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.broken
}

type pipeWriter struct {
	w io.Writer
	b *brokenPipe
}

func (p pipeWriter) Write(data []byte) (int, error) {
	n, err := p.w.Write(data)
	if errors.Is(err, syscall.EPIPE) {
		p.b.mu.Lock()
		p.b.broken = true
		if f, ok := p.w.(*os.File); ok {
			p.b.file = f
		}
		cancel := p.b.cancel
		p.b.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	}
	return n, err
}

// die ends the process by SIGPIPE: with SIGPIPE no longer
// notified, a write to the broken standard stream is what makes the Go
// runtime end the process by the signal (a SIGPIPE sent by kill it would
// ignore). A stream that is no file, or a write that does not end the
// process, ends it with the status a shell shows for the signal.
func (b *brokenPipe) die() {
	signal.Reset(syscall.SIGPIPE)
	b.mu.Lock()
	f := b.file
	b.mu.Unlock()
	if f != nil {
		_, _ = f.Write([]byte{'\n'})
	}
	os.Exit(128 + int(syscall.SIGPIPE))
}
