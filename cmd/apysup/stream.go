package main

import (
	"io"
	"sync"
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
