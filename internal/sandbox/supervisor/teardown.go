package supervisor

import (
	"errors"
	"fmt"
	"sync"
)

// teardown is what a run leaves to undo once its result is ready: the
// sandbox's release and destruction, the channel, the workspace's mount,
// the run directory. It is undone in the reverse of the order it was
// added, off the result's path (background).
type teardown []func() error

func (t *teardown) add(f func() error) { *t = append(*t, f) }

// undo runs every step, the last added first, and joins their errors.
func (t teardown) undo() error {
	var errs []error
	for i := len(t) - 1; i >= 0; i-- {
		errs = append(errs, t[i]())
	}
	return errors.Join(errs...)
}

// background runs the teardowns of runs whose results were returned;
// Close waits for them and reports what failed (a run's result cannot:
// it was returned already). It keeps the first maxTeardownErrors errors
// and counts the rest: a long-lived server whose teardowns keep failing
// must not grow with them.
type background struct {
	wg      sync.WaitGroup
	mu      sync.Mutex
	errs    []error
	dropped int
}

const maxTeardownErrors = 16

func (bg *background) undo(t teardown) {
	if len(t) == 0 {
		return
	}
	bg.wg.Go(func() {
		if err := t.undo(); err != nil {
			bg.mu.Lock()
			if len(bg.errs) < maxTeardownErrors {
				bg.errs = append(bg.errs, err)
			} else {
				bg.dropped++
			}
			bg.mu.Unlock()
		}
	})
}

// wait waits for every teardown begun and returns their errors.
func (bg *background) wait() error {
	bg.wg.Wait()
	bg.mu.Lock()
	defer bg.mu.Unlock()
	if bg.dropped > 0 {
		return errors.Join(append(bg.errs, fmt.Errorf("and %d more teardowns failed", bg.dropped))...)
	}
	return errors.Join(bg.errs...)
}
