package native

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/apysup/apysup/internal/sandbox"
)

// GuestUID and GuestGID are the ids the guest runs as inside its user
// namespace. Container root (0), which only exists while libcontainer sets
// the sandbox up, maps to a second host id of the same slot.
const (
	GuestUID = sandbox.GuestUID
	GuestGID = sandbox.GuestGID
)

// ErrUIDsExhausted is returned when every slot of the range is in use.
var ErrUIDsExhausted = errors.New("native: host uid range exhausted")

// UIDAllocator hands out host uid/gid pairs from [Base, Base+Count): slot i
// owns Base+2i (mapped to container root) and Base+2i+1 (mapped to GuestUID),
// used as both uid and gid. A pair belongs to one run at a time, so
// concurrent guests never share a host identity, also across supervisor
// processes: a slot is taken only with an exclusive flock(2) on a lock file
// of its own (LockDir/<uid>), which the kernel drops when the process dies.
// The range must not overlap real users.
type UIDAllocator struct {
	base    uint32
	slots   int
	lockDir string

	mu    sync.Mutex
	used  []bool
	locks map[int]*os.File
	next  int
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
	return &UIDAllocator{base: base, slots: n, used: make([]bool, n), locks: map[int]*os.File{},
		lockDir: uidLockDir(base)}, nil
}

// uidLockDir prefers /run (root's, usually tmpfs) to the shared temp dir.
func uidLockDir(base uint32) string {
	name := fmt.Sprintf("apysup-native-uids-%d", base)
	if unix.Access("/run", unix.W_OK) == nil {
		return filepath.Join("/run", name)
	}
	return filepath.Join(os.TempDir(), name)
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
		if a.used[s] {
			continue
		}
		f, err := a.lock(s)
		if err != nil {
			return IDPair{}, err
		}
		if f == nil {
			continue // another process holds it
		}
		a.used[s] = true
		a.locks[s] = f
		a.next = (s + 1) % a.slots
		return a.pair(s), nil
	}
	return IDPair{}, ErrUIDsExhausted
}

// lock takes slot s across processes; nil, nil means another process has it.
func (a *UIDAllocator) lock(s int) (*os.File, error) {
	if err := os.MkdirAll(a.lockDir, 0o700); err != nil {
		return nil, fmt.Errorf("native: uid lock dir: %w", err)
	}
	// Anyone who could write here could free another supervisor's slot.
	if err := ownedPrivately(a.lockDir); err != nil {
		return nil, fmt.Errorf("native: uid lock dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(a.lockDir, fmt.Sprint(a.pair(s).Root)), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("native: uid lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, fmt.Errorf("native: uid lock: %w", err)
	}
	return f, nil
}

// Release frees a pair returned by Acquire.
func (a *UIDAllocator) Release(p IDPair) {
	s := int(p.Root-a.base) / 2
	a.mu.Lock()
	defer a.mu.Unlock()
	if p.Root >= a.base && s < a.slots && a.pair(s) == p && a.used[s] {
		a.used[s] = false
		a.locks[s].Close() // drops the flock
		delete(a.locks, s)
	}
}

func (a *UIDAllocator) pair(s int) IDPair {
	r := a.base + 2*uint32(s)
	return IDPair{Root: r, Guest: r + 1}
}

// ownedPrivately checks that dir is a directory of this process's euid that
// no one else can write to.
func ownedPrivately(dir string) error {
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Geteuid() || st.Mode&0o022 != 0 {
		return fmt.Errorf("%s is not a directory of uid %d writable only by it", dir, os.Geteuid())
	}
	return nil
}

// checkUnused refuses a range that holds a local user or group: a guest
// would share that account's host identity (its files, its processes).
func (a *UIDAllocator) checkUnused(files ...string) error {
	end := uint64(a.base) + 2*uint64(a.slots)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			// name:x:id:... in both passwd and group
			fields := strings.SplitN(line, ":", 4)
			if len(fields) < 3 {
				continue
			}
			id, err := strconv.ParseUint(fields[2], 10, 32)
			if err == nil && id >= uint64(a.base) && id < end {
				return fmt.Errorf("native: %s has %q with id %d inside the sandbox uid range [%d, %d)",
					f, fields[0], id, a.base, end)
			}
		}
	}
	return nil
}
