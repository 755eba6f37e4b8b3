package wazero

import (
	"fmt"
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
	// guarded: mapping is a guard reservation (reserveGuarded), readable
	// and writable up to granted only, so that every access out of
	// bounds faults; the compiled module omits its bounds checks.
	guarded bool
	granted uint64
	// reserve is what Allocate maps when it is more than limit: a guest
	// started before its job maps the most the job's limit could be.
	reserve uint64

	mu      sync.Mutex
	limit   uint64
	refused bool   // a grow was refused: the run hit its memory limit
	high    uint64 // the largest size granted, with the stack charged then
	size    uint64 // the size granted last
	// stack is what wazero's stack of compiled frames has grown to, which
	// the limit counts with the memory (ChargeStack).
	stack uint64
	// guestLimit is the guest's own RLIMIT_AS or RLIMIT_DATA (rlimit.go),
	// when guestLimited: a grow past it fails as a native allocation past
	// them does, and is not the run's memory limit.
	guestLimit   uint64
	guestLimited bool
}

// guardReservation is what a guarded memory reserves: every address a
// wasm32 load or store forms (a 32-bit index plus a 32-bit constant offset,
// plus the widest access, 16 bytes) lies inside it, so that one past the
// memory's length faults instead of reaching other memory. It is at least
// wazero's experimental.GuardedMemoryReservation, apysup's patch
// (third_party/wazero), which is not named here so that a build against
// wazero as released still compiles.
const guardReservation = 8<<30 + 64<<10

// GuardedMemory implements apysup's experimental.GuardedMemoryAllocator
// (third_party/wazero): python.wasm compiled for a guarded allocator has
// no bounds checks, and instantiates only with one.
func (m *linearMemory) GuardedMemory() bool { return m.guarded }

// guardAvailable reports whether this process can reserve a guarded
// memory: not where guardSupported is false, nor under an RLIMIT_AS (or a
// kernel) that refuses 8 GiB of address space. python.wasm is then
// compiled with its bounds checks, and runs as it did before guards.
// Asked once per process: Load, each child's assemble and doctor ask it.
var guardAvailable = sync.OnceValue(func() bool {
	if !guardSupported {
		return false
	}
	mapping, err := mapGuard()
	if err != nil {
		return false
	}
	_ = unix.Munmap(mapping)
	return true
})

// mapGuard maps a guard reservation, inaccessible throughout.
func mapGuard() ([]byte, error) {
	return unix.Mmap(-1, 0, guardReservation, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
}

// GuardedMemory reports whether this process's wazero children run
// python.wasm without bounds checks, on a guarded memory (guardAvailable;
// with wazero as released they keep the checks whatever this says).
func GuardedMemory() bool { return guardAvailable() }

// reserveGuarded maps the guard reservation, inaccessible until Reallocate
// grants its first bytes, and makes its faults end this process with
// SIGSEGV (guardSet). The guest must not start if it cannot.
func (m *linearMemory) reserveGuarded() error {
	mapping, err := mapGuard()
	if err != nil {
		return fmt.Errorf("wazero: guarded memory: reserving %d bytes: %w", guardReservation, err)
	}
	if err := guardSet(mapping); err != nil {
		_ = unix.Munmap(mapping)
		return err
	}
	adviseHuge(mapping)
	m.mapping, m.mapped, m.guarded, m.granted = mapping, true, true, 0
	return nil
}

// Allocate implements experimental.LinearMemory. The mapping is the
// limit (or the reserve), or the module's own maximum (4 GiB for wasm32)
// if that is less. Where the kernel refuses it, the memory comes from the
// Go heap, at the limit (wazero cannot be told that an allocation failed).
func (m *linearMemory) Allocate(_, maxBytes uint64) experimental.LinearMemory {
	if m.guarded {
		if m.mapping == nil {
			// startGuest reserves first: code without bounds checks
			// never runs on memory that is not guarded.
			panic("wazero: guarded memory allocated without its reservation")
		}
		return m
	}
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
	} else {
		adviseHuge(mapping)
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
	if size+chargedStack(m.stack) > m.limit {
		m.refused = true
		return nil
	}
	if size > uint64(len(m.mapping)) {
		return nil // past the module's maximum (or the reserve): wazero refuses first
	}
	if m.guarded && size > m.granted {
		if err := unix.Mprotect(m.mapping[m.granted:size], unix.PROT_READ|unix.PROT_WRITE); err != nil {
			return nil
		}
		m.granted = size
	}
	m.size = size
	m.high = max(m.high, size+chargedStack(m.stack))
	return m.mapping[:size:size]
}

// maxCompiledStack bounds wazero's stack of compiled frames whatever the
// memory limit: it is a Go slice, copied whole each time it doubles.
const maxCompiledStack = 1 << 30

// compiledStackFree is the part of that stack the limit does not count,
// as a native process's first stack pages come with it: a guest whose
// memory is full can still call deeper, so that CPython raises its
// MemoryError and unwinds (natively the cgroup kills it), not a stack
// overflow in the middle (recursion_memory.py).
const compiledStackFree = 8 << 20

// chargedStack is what the limit counts of a compiled frames' stack.
func chargedStack(stack uint64) uint64 {
	return stack - min(stack, compiledStackFree)
}

// ChargeStack implements apysup's experimental.StackChargedMemory
// (third_party/wazero): wazero's stack of compiled frames, which doubles
// as a deep recursion needs it, is the child's memory as the linear
// memory is, so the run's memory limit counts the two together, as a
// native guest's cgroup counts its stack's pages (the first
// compiledStackFree bytes aside). A growth past the limit is refused:
// wazero ends the guest with "stack overflow", SIGSEGV as a native stack
// overflow (signal.go), and not the run's memory limit. It replaces
// wazero's own ceiling, a fixed 50 MB, which ended a recursion through C
// that natively passes, and left that much of the child's memory outside
// the guest's limit (RATIONALE.md, "A C stack four times native's").
func (m *linearMemory) ChargeStack(from, to uint64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if to < from || to > maxCompiledStack {
		return false
	}
	stack := m.stack + (to - from)
	if m.size+chargedStack(stack) > m.limit {
		return false
	}
	m.stack = stack
	m.high = max(m.high, m.size+chargedStack(stack))
	return true
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

// allocationFailed records what the guest's interpreter reports of a
// MemoryError it raised (apysup_proc.memory_refused): the run's memory
// limit reached, as a refused grow is. A request too large for wasm32
// (2 GiB and more) is refused inside the guest before any grow, and
// natively it is granted and, touched, ends the guest at its memory
// limit. The guest's own RLIMIT_AS or RLIMIT_DATA, below the run's
// limit, is what a native allocation meets first: a MemoryError then is
// the guest's, as natively.
func (m *linearMemory) allocationFailed() {
	m.mu.Lock()
	if !m.guestLimited || m.guestLimit >= m.limit {
		m.refused = true
	}
	m.mu.Unlock()
}

// usage reports whether a grow was refused, and the largest size granted
// with the compiled frames' stack then.
func (m *linearMemory) usage() (refused bool, high uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.refused, m.high
}

// Free implements experimental.LinearMemory.
func (m *linearMemory) Free() {
	if m.guarded && m.mapping != nil {
		guardClear(m.mapping)
	}
	if m.mapped {
		_ = unix.Munmap(m.mapping)
	}
	m.mapping, m.mapped, m.granted = nil, false, 0
}
