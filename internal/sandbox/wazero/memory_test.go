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
