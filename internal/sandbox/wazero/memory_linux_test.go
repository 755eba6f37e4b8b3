package wazero

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/apysup/apysup/internal/testenv"
)

// vmFlags returns the VmFlags line of the mapping of this process that
// holds addr, from /proc/self/smaps ("hg": MADV_HUGEPAGE was advised).
func vmFlags(addr uintptr) (string, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return "", err
	}
	defer f.Close()
	inside := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := smapsRange(line); ok {
			inside = lo <= addr && addr < hi
			continue
		}
		if inside && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:")), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no mapping holds %#x", addr)
}

// advisedHuge reports whether VmFlags (vmFlags) carry hg.
func advisedHuge(flags string) bool { return strings.Contains(" "+flags+" ", " hg ") }

// smapsRange parses the address range that starts a mapping's entry.
func smapsRange(line string) (lo, hi uintptr, ok bool) {
	field, _, _ := strings.Cut(line, " ")
	a, b, found := strings.Cut(field, "-")
	if !found {
		return 0, 0, false
	}
	l, err1 := strconv.ParseUint(a, 16, 64)
	h, err2 := strconv.ParseUint(b, 16, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uintptr(l), uintptr(h), true
}

// hasTHP reports whether the kernel has transparent huge pages at all
// (whatever its mode: MADV_HUGEPAGE is accepted even under "never").
func hasTHP() bool {
	_, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil
}

// A guest memory mapped by Allocate is advised for huge pages (adviseHuge).
func TestLinearMemoryHugePages(t *testing.T) {
	testenv.Need(t, hasTHP(), "a kernel with transparent huge pages (/sys/kernel/mm/transparent_hugepage)")
	m := &linearMemory{limit: 64 << 20}
	lm := m.Allocate(pageSize, 1<<32)
	defer lm.Free()
	b := lm.Reallocate(256 * pageSize)
	if !m.mapped {
		t.Fatal("the memory came from the Go heap")
	}
	flags, err := vmFlags(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	if err != nil {
		t.Fatal(err)
	}
	if !advisedHuge(flags) {
		t.Fatalf("VmFlags %q: no hg (MADV_HUGEPAGE)", flags)
	}
}
