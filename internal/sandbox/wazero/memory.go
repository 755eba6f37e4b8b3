package wazero

import (
	"sync"

	"golang.org/x/sys/unix"

	"github.com/tetratelabs/wazero/experimental"
)

const pageSize = 1 << 16

// wasm32MemoryBytes is the most linear memory a wasm32 module can have.
const wasm32MemoryBytes = 4 << 30

// linearMemory backs one run's guest memory and refuses to grow it past
// limit: memory.grow answers -1, CPython's allocator sees NULL and raises
// MemoryError (or aborts), the same a cgroup memory limit means natively.
// The memory is one anonymous mapping, reserved at once and never moved: a
// grow hands the guest more of it and copies nothing, the kernel provides
// pages as the guest touches them, the Go heap (and so its GC) never holds
// guest memory, and Free gives it all back at once. A guest growing to
// 200 MiB took 1.56-1.77 s of CPU on a Go slice grown by doubling,
// 1.17-1.35 s on the mapping (BenchmarkWazeroMemoryGrowth). One per run,
// used by the goroutine running the guest; a guest started before its job
// has its limit set by bind, on another goroutine.
type linearMemory struct {
	mapping []byte // nil until Allocate, and after Free
	mapped  bool   // mapping is the kernel's, not the Go heap's
	// reserve is what Allocate maps when it is more than limit: a guest
	// started before its job maps the most the job's limit could be.
	reserve uint64

	mu      sync.Mutex
	limit   uint64
	refused bool   // a grow was refused: the run hit its memory limit
	high    uint64 // the largest size granted
	// guestLimit is the guest's own RLIMIT_AS or RLIMIT_DATA (rlimit.go),
	// when guestLimited: a grow past it fails as a native allocation past
	// them does, and is not the run's memory limit.
	guestLimit   uint64
	guestLimited bool
}

// Allocate implements experimental.LinearMemory. The mapping is the
// limit (or the reserve), or the module's own maximum (4 GiB for wasm32)
// if that is less. Where the kernel refuses it, the memory comes from the
// Go heap, at the limit (wazero cannot be told that an allocation failed).
func (m *linearMemory) Allocate(_, maxBytes uint64) experimental.LinearMemory {
	m.mu.Lock()
	limit := m.limit
	m.mu.Unlock()
	size := max(limit, m.reserve)
	if maxBytes > 0 {
		size, limit = min(size, maxBytes), min(limit, maxBytes)
	}
	mapping, err := unix.Mmap(-1, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
	if err != nil && size > limit {
		mapping, err = unix.Mmap(-1, 0, int(limit), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
	}
	if err != nil {
		mapping = make([]byte, limit)
	}
	m.mapping, m.mapped = mapping, err == nil
	return m
}

// Reallocate implements experimental.LinearMemory; size only ever grows.
func (m *linearMemory) Reallocate(size uint64) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.guestLimited && m.guestLimit < m.limit && size > m.guestLimit {
		return nil
	}
	if size > m.limit {
		m.refused = true
		return nil
	}
	if size > uint64(len(m.mapping)) {
		return nil // past the module's maximum (or the reserve): wazero refuses first
	}
	m.high = max(m.high, size)
	return m.mapping[:size:size]
}

// setLimit sets the limit a grow is checked against from now on.
func (m *linearMemory) setLimit(limit uint64) {
	m.mu.Lock()
	m.limit = limit
	m.mu.Unlock()
}

// setGuestLimit sets the guest's own limit (RLIM_INFINITY: none).
func (m *linearMemory) setGuestLimit(limit uint64) {
	m.mu.Lock()
	m.guestLimit, m.guestLimited = limit, limit != rlimInfinity
	m.mu.Unlock()
}

// usage reports whether a grow was refused, and the largest size granted.
func (m *linearMemory) usage() (refused bool, high uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.refused, m.high
}

// Free implements experimental.LinearMemory.
func (m *linearMemory) Free() {
	if m.mapped {
		_ = unix.Munmap(m.mapping)
	}
	m.mapping, m.mapped = nil, false
}
