package wazero

import (
	"golang.org/x/sys/unix"

	"github.com/tetratelabs/wazero/experimental"
)

const pageSize = 1 << 16

// linearMemory backs one run's guest memory and refuses to grow it past
// limit: memory.grow answers -1, CPython's allocator sees NULL and raises
// MemoryError (or aborts), the same a cgroup memory limit means natively.
// The memory is one anonymous mapping, reserved at once and never moved: a
// grow hands the guest more of it and copies nothing, the kernel provides
// pages as the guest touches them, the Go heap (and so its GC) never holds
// guest memory, and Free gives it all back at once. A guest growing to
// 200 MiB took 1.56-1.77 s of CPU on a Go slice grown by doubling,
// 1.17-1.35 s on the mapping (BenchmarkWazeroMemoryGrowth). One per run,
// used only by the goroutine running the guest.
type linearMemory struct {
	mapping []byte // nil until Allocate, and after Free
	mapped  bool   // mapping is the kernel's, not the Go heap's
	limit   uint64
	refused bool   // a grow was refused: the run hit its memory limit
	high    uint64 // the largest size granted
}

// Allocate implements experimental.MemoryAllocator. The mapping is the
// limit, or the module's own maximum (4 GiB for wasm32) if that is less.
// Where the kernel refuses it, the memory comes from the Go heap (wazero
// cannot be told that an allocation failed).
func (m *linearMemory) Allocate(_, maxBytes uint64) experimental.LinearMemory {
	size := m.limit
	if maxBytes > 0 {
		size = min(size, maxBytes)
	}
	mapping, err := unix.Mmap(-1, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
	if err != nil {
		mapping = make([]byte, size)
	}
	m.mapping, m.mapped = mapping, err == nil
	return m
}

// Reallocate implements experimental.LinearMemory; size only ever grows.
func (m *linearMemory) Reallocate(size uint64) []byte {
	if size > m.limit {
		m.refused = true
		return nil
	}
	if size > uint64(len(m.mapping)) {
		return nil // past the module's maximum: wazero refuses first
	}
	m.high = max(m.high, size)
	return m.mapping[:size:size]
}

// Free implements experimental.LinearMemory.
func (m *linearMemory) Free() {
	if m.mapped {
		_ = unix.Munmap(m.mapping)
	}
	m.mapping, m.mapped = nil, false
}
