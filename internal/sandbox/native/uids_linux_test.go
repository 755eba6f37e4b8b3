package native

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUIDAllocator(t *testing.T) {
	a, err := NewUIDAllocator(2_000_000, 6)
	if err != nil {
		t.Fatal(err)
	}
	a.lockDir = t.TempDir()
	// A second allocator over the same range stands for another supervisor
	// process: flock(2) locks of separate opens exclude each other.
	other, _ := NewUIDAllocator(2_000_000, 6)
	other.lockDir = a.lockDir

	seen := map[uint32]bool{}
	var pairs []IDPair
	for range 2 {
		p, err := a.Acquire()
		if err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, p)
	}
	p, err := other.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	pairs = append(pairs, p)
	for _, p := range pairs {
		if p.Guest != p.Root+1 || p.Root < 2_000_000 || p.Guest >= 2_000_006 || seen[p.Root] || seen[p.Guest] {
			t.Fatalf("bad or shared pair %+v among %v", p, pairs)
		}
		seen[p.Root], seen[p.Guest] = true, true
	}
	if _, err := a.Acquire(); !errors.Is(err, ErrUIDsExhausted) {
		t.Fatalf("4th pair of a 3-pair range: %v", err)
	}
	a.Release(pairs[0])
	a.Release(pairs[0]) // twice is harmless
	if p, err := other.Acquire(); err != nil || p != pairs[0] {
		t.Fatalf("released pair not handed out again: %+v %v", p, err)
	}
}

func TestUIDAllocatorRejectsBadRanges(t *testing.T) {
	for _, r := range [][2]uint32{{0, 100}, {1000, 1}, {1<<32 - 10, 100}} {
		if _, err := NewUIDAllocator(r[0], r[1]); err == nil {
			t.Errorf("range %v accepted", r)
		}
	}
}

func TestUIDRangeMustBeUnused(t *testing.T) {
	passwd := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(passwd, []byte("root:x:0:0::/root:/bin/sh\nbob:x:2000003:100::/home/bob:/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, _ := NewUIDAllocator(2_000_000, 6)
	if err := a.checkUnused(passwd); err == nil || !strings.Contains(err.Error(), "bob") {
		t.Fatalf("range holding bob accepted: %v", err)
	}
	b, _ := NewUIDAllocator(2_000_004, 6)
	if err := b.checkUnused(passwd, "/nonexistent"); err != nil {
		t.Fatal(err)
	}
}
