package native

import (
	"errors"
	"fmt"
	"sync"
)

// GuestUID and GuestGID are the ids the guest runs as inside its user
// namespace. Container root (0), which only exists while libcontainer sets
// the sandbox up, maps to a second host id of the same slot.
const (
	GuestUID = 1000
	GuestGID = 1000
)

// ErrUIDsExhausted is returned when every slot of the range is in use.
var ErrUIDsExhausted = errors.New("native: host uid range exhausted")

// UIDAllocator hands out host uid/gid pairs from [Base, Base+Count): slot i
// owns Base+2i (mapped to container root) and Base+2i+1 (mapped to GuestUID),
// used as both uid and gid. A pair belongs to one run at a time, so
// concurrent guests never share a host identity. The range must not overlap
// real users; it is private to this process (two supervisors on one host need
// disjoint ranges).
type UIDAllocator struct {
	base  uint32
	slots int

	mu   sync.Mutex
	used []bool
	next int
}

// IDPair is the host identity of one run.
type IDPair struct {
	Root  uint32 // host id of container root (setup only)
	Guest uint32 // host id of GuestUID/GuestGID
}

// NewUIDAllocator returns an allocator over [base, base+count).
func NewUIDAllocator(base, count uint32) (*UIDAllocator, error) {
	if count < 2 {
		return nil, fmt.Errorf("native: uid range of %d ids holds no pair", count)
	}
	if base == 0 || uint64(base)+uint64(count) > 1<<32-1 {
		return nil, fmt.Errorf("native: uid range [%d, %d) is invalid", base, uint64(base)+uint64(count))
	}
	n := int(count / 2)
	return &UIDAllocator{base: base, slots: n, used: make([]bool, n)}, nil
}

// DefaultUIDAllocator covers [1_500_000, 1_565_536).
func DefaultUIDAllocator() *UIDAllocator {
	a, _ := NewUIDAllocator(1_500_000, 65536)
	return a
}

// Acquire returns a free pair; Release gives it back.
func (a *UIDAllocator) Acquire() (IDPair, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := 0; i < a.slots; i++ {
		s := (a.next + i) % a.slots
		if !a.used[s] {
			a.used[s] = true
			a.next = (s + 1) % a.slots
			return a.pair(s), nil
		}
	}
	return IDPair{}, ErrUIDsExhausted
}

// Release frees a pair returned by Acquire.
func (a *UIDAllocator) Release(p IDPair) {
	s := int(p.Root-a.base) / 2
	a.mu.Lock()
	defer a.mu.Unlock()
	if p.Root >= a.base && s < a.slots && a.pair(s) == p {
		a.used[s] = false
	}
}

func (a *UIDAllocator) pair(s int) IDPair {
	r := a.base + 2*uint32(s)
	return IDPair{Root: r, Guest: r + 1}
}
