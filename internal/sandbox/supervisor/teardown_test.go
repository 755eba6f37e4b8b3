package supervisor

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestTeardownUndoesInReverse: the steps of a run's teardown run last
// added first, every one of them even after a failure, and Close's wait
// reports every failure of every teardown begun.
func TestTeardownUndoesInReverse(t *testing.T) {
	var mu sync.Mutex
	var order []string
	step := func(name string, err error) func() error {
		return func() error {
			mu.Lock()
			defer mu.Unlock()
			order = append(order, name)
			return err
		}
	}
	errRelease, errRemove := errors.New("release"), errors.New("remove")
	var bg background
	var undo teardown
	undo.add(step("remove run dir", errRemove))
	undo.add(step("unmount workspace", nil))
	undo.add(step("release sandbox", errRelease))
	bg.undo(undo)
	bg.undo(nil) // a run refused before it made anything
	err := bg.wait()
	if want := []string{"release sandbox", "unmount workspace", "remove run dir"}; !slices.Equal(order, want) {
		t.Fatalf("undone in order %q, want %q", order, want)
	}
	if !errors.Is(err, errRelease) || !errors.Is(err, errRemove) {
		t.Fatalf("wait: %v, want both failures", err)
	}
	if err := (&background{}).wait(); err != nil {
		t.Fatalf("nothing begun: %v", err)
	}
}

// TestTeardownErrorsAreBounded: past maxTeardownErrors, failures are
// counted, not kept.
func TestTeardownErrorsAreBounded(t *testing.T) {
	var bg background
	for range maxTeardownErrors + 5 {
		bg.undo(teardown{func() error { return errors.New("unmount") }})
	}
	err := bg.wait()
	if len(bg.errs) != maxTeardownErrors || bg.dropped != 5 || !strings.Contains(err.Error(), "and 5 more teardowns failed") {
		t.Fatalf("kept %d, dropped %d: %v", len(bg.errs), bg.dropped, err)
	}
}
