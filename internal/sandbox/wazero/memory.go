package wazero

import "github.com/tetratelabs/wazero/experimental"

const pageSize = 1 << 16

// linearMemory backs one run's guest memory and refuses to grow it past
// limit: memory.grow answers -1, CPython's allocator sees NULL and raises
// MemoryError (or aborts), the same a cgroup memory limit means natively.
// One per run, used only by the goroutine running the guest.
type linearMemory struct {
	buf     []byte
	limit   uint64
	refused bool   // a grow was refused: the run hit its memory limit
	high    uint64 // the largest size granted
}

// Allocate implements experimental.MemoryAllocator.
func (m *linearMemory) Allocate(capacity, _ uint64) experimental.LinearMemory {
	m.buf = make([]byte, 0, min(capacity, m.limit))
	return m
}

// Reallocate implements experimental.LinearMemory; size only ever grows.
func (m *linearMemory) Reallocate(size uint64) []byte {
	if size > m.limit {
		m.refused = true
		return nil
	}
	m.high = max(m.high, size)
	if size <= uint64(cap(m.buf)) {
		m.buf = m.buf[:size]
		return m.buf
	}
	// Amortised growth, never beyond the limit.
	next := make([]byte, size, min(max(size, 2*uint64(cap(m.buf))), m.limit))
	copy(next, m.buf)
	m.buf = next
	return next
}

// Free implements experimental.LinearMemory.
func (m *linearMemory) Free() { m.buf = nil }
