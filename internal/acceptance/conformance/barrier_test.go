package conformance

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestBarrierAt(t *testing.T) {
	for _, c := range []struct {
		point, at string
		want      bool
	}{
		{"accept.start", "accept.start", true},
		{"accept.start", "revoke.start", false},
		{"*.start", "revoke.start", true},
		{"*.start", "accept.begin", false},
	} {
		if got := (&Barrier{Point: c.point}).At(c.at); got != c.want {
			t.Errorf("Barrier{%q}.At(%q) = %v", c.point, c.at, got)
		}
	}
}

// TestBarrierReleasesTogether: no waiter passes before Release, and every
// waiter passes after it.
func TestBarrierReleasesTogether(t *testing.T) {
	b := &Barrier{Dir: t.TempDir(), Point: "accept.start"}
	var wg sync.WaitGroup
	for _, name := range []string{"a", "b", "c"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.Wait(name)
			if _, err := os.Stat(filepath.Join(b.Dir, "go")); err != nil {
				t.Errorf("%s passed before the release", name)
			}
		}()
	}
	b.Release(t, 3)
	wg.Wait()
}
