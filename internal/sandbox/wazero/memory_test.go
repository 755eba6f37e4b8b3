package wazero

import "testing"

func TestLinearMemoryCap(t *testing.T) {
	m := &linearMemory{limit: 4 * pageSize}
	lm := m.Allocate(pageSize, 1<<32)
	defer lm.Free()
	if b := lm.Reallocate(pageSize); len(b) != pageSize {
		t.Fatalf("len %d", len(b))
	}
	b := lm.Reallocate(3 * pageSize)
	if len(b) != 3*pageSize || cap(b) > 4*pageSize {
		t.Fatalf("len %d cap %d, want len %d, cap <= limit", len(b), cap(b), 3*pageSize)
	}
	b[0] = 7
	grown := lm.Reallocate(4 * pageSize)
	if len(grown) != 4*pageSize || grown[0] != 7 {
		t.Fatal("growing to the limit lost contents or length")
	}
	if &grown[0] != &b[0] {
		t.Fatal("growing moved the memory (a copy)")
	}
	if grown[4*pageSize-1] != 0 {
		t.Fatal("new memory is not zero")
	}
	if m.refused {
		t.Fatal("refused within the limit")
	}
	if b := lm.Reallocate(5 * pageSize); b != nil || !m.refused {
		t.Fatal("grew past the limit")
	}
	if m.high != 4*pageSize {
		t.Fatalf("high %d", m.high)
	}
	lm.Free()
	if m.mapping != nil || m.mapped {
		t.Fatal("Free kept the mapping")
	}
}

// The mapping is the module's maximum when that is below the limit.
func TestLinearMemoryModuleMax(t *testing.T) {
	m := &linearMemory{limit: 8 * pageSize}
	lm := m.Allocate(pageSize, 2*pageSize)
	defer lm.Free()
	if b := lm.Reallocate(2 * pageSize); len(b) != 2*pageSize {
		t.Fatalf("len %d", len(b))
	}
	if b := lm.Reallocate(3 * pageSize); b != nil || m.refused {
		t.Fatalf("grew past the module's maximum (%d bytes), or called it the run's limit (%v)", len(b), m.refused)
	}
}

// wazero's stack of compiled frames is charged to the run's memory limit
// with the linear memory, past its first compiledStackFree bytes: a
// growth of either that would take the two past it is refused, the
// stack's as a stack overflow (not the run's memory limit), the memory's
// as the limit; the peak counts both.
func TestLinearMemoryChargesTheStack(t *testing.T) {
	const free = compiledStackFree
	m := &linearMemory{limit: 8 * pageSize}
	lm := m.Allocate(pageSize, 1<<32)
	defer lm.Free()
	if b := lm.Reallocate(4 * pageSize); len(b) != 4*pageSize {
		t.Fatalf("len %d", len(b))
	}
	if !m.ChargeStack(0, free) || m.high != 4*pageSize {
		t.Fatalf("the stack's free part refused, or counted: high %d", m.high)
	}
	if !m.ChargeStack(free, free+3*pageSize) {
		t.Fatal("a stack within the limit refused")
	}
	if m.high != 7*pageSize {
		t.Fatalf("high %d, want the memory and the stack's counted part, %d", m.high, 7*pageSize)
	}
	if m.ChargeStack(free+3*pageSize, free+5*pageSize) || m.refused {
		t.Fatalf("the stack grew past the limit (refused as the memory limit: %v)", m.refused)
	}
	if b := lm.Reallocate(6 * pageSize); b != nil || !m.refused {
		t.Fatal("the memory grew past the limit the stack takes part of")
	}
	if !m.ChargeStack(free+3*pageSize, free+4*pageSize) || m.high != 8*pageSize {
		t.Fatalf("a stack growth to the limit refused, or high %d", m.high)
	}
	if m.ChargeStack(free+4*pageSize, free+3*pageSize) {
		t.Fatal("a shrinking stack charged")
	}
	big := &linearMemory{limit: 4 * maxCompiledStack}
	if big.ChargeStack(0, maxCompiledStack+1) || !big.ChargeStack(0, maxCompiledStack) {
		t.Fatal("maxCompiledStack does not bound the stack under a larger limit")
	}
}
