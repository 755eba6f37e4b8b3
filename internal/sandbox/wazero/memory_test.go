package wazero

import "testing"

func TestLinearMemoryCap(t *testing.T) {
	m := &linearMemory{limit: 4 * pageSize}
	lm := m.Allocate(pageSize, 1<<32)
	if b := lm.Reallocate(pageSize); len(b) != pageSize {
		t.Fatalf("len %d", len(b))
	}
	b := lm.Reallocate(3 * pageSize)
	if len(b) != 3*pageSize || cap(b) > 4*pageSize {
		t.Fatalf("len %d cap %d, want len %d, cap <= limit", len(b), cap(b), 3*pageSize)
	}
	b[0] = 7
	if b := lm.Reallocate(4 * pageSize); len(b) != 4*pageSize || b[0] != 7 {
		t.Fatal("growing to the limit lost contents or length")
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
}
