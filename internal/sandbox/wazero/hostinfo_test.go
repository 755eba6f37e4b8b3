package wazero

import (
	"bytes"
	"encoding/binary"
	"github.com/tetratelabs/wazero/api"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	for _, c := range []struct {
		list string
		mask []byte
		ok   bool
	}{
		{"0", []byte{0x01}, true},
		{"0-1", []byte{0x03}, true},
		{"0-3,5,7-8", []byte{0xaf, 0x01}, true},
		{"9", []byte{0x00, 0x02}, true},
		{"4094-5000", append(make([]byte, 511), 0xc0), true}, // beyond maxCPUs left out
		{"", nil, false},
		{"a", nil, false},
		{"3-1", nil, false},
		{"-1", nil, false},
		{"0,", nil, false},
		{"1-", nil, false},
	} {
		mask, ok := parseCPUList(c.list)
		if ok != c.ok || !bytes.Equal(mask, c.mask) {
			t.Errorf("%q: %x %v, want %x %v", c.list, mask, ok, c.mask, c.ok)
		}
	}
}

func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0", "0-1", "0-3,5,7-8", "", "3-1", "0-4095,9999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		mask, ok := parseCPUList(s)
		if ok != (len(mask) > 0) || len(mask) > maxCPUs/8 {
			t.Fatalf("%q: %d bytes, ok %v", s, len(mask), ok)
		}
	})
}

// The mask is the kernel's online list, whatever this process's affinity,
// as the native guest's (runc's init resets its affinity to every CPU).
func TestOnlineCPUsAreTheKernels(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the kernel's list is Linux's")
	}
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		t.Fatal(err)
	}
	want, ok := parseCPUList(strings.TrimSpace(string(b)))
	if !ok || !bytes.Equal(onlineCPUs(), want) {
		t.Fatalf("onlineCPUs %x, the kernel's %q", onlineCPUs(), b)
	}
}

// The load averages are the kernel's, as /proc/loadavg prints them to two
// decimals (the two reads may straddle one of the kernel's 5 s updates).
func TestLoadavgIsTheKernels(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the kernel's counters are Linux's")
	}
	avg, ok := loadavg()
	b, err := os.ReadFile("/proc/loadavg")
	if !ok || err != nil {
		t.Fatalf("loadavg ok %v, /proc/loadavg: %v", ok, err)
	}
	for i, f := range strings.Fields(string(b))[:3] {
		want, err := strconv.ParseFloat(f, 64)
		if err != nil || avg[i] < 0 || math.Abs(avg[i]-want) > 0.25 {
			t.Errorf("load %d: %v, /proc/loadavg says %s", i, avg[i], f)
		}
	}
	if got := writeLoadavg(nil, 0); got != 0 {
		t.Errorf("loadavg without a memory answered %d", got)
	}
}

// The page size and the memory pages are glibc's sysconf answers: the
// machine's page size and /proc/meminfo's total and free memory in pages
// (free memory moves between the two reads: within 1 GiB).
func TestMemoryPagesAreTheKernels(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the kernel's counters are Linux's")
	}
	pages, ok := memoryPages()
	b, err := os.ReadFile("/proc/meminfo")
	if !ok || err != nil {
		t.Fatalf("memoryPages ok %v, /proc/meminfo: %v", ok, err)
	}
	kib := map[string]uint64{}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[2] == "kB" {
			v, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			kib[strings.TrimSuffix(f[0], ":")] = v
		}
	}
	page := uint64(os.Getpagesize())
	if pages[0] != page || pages[1] != kib["MemTotal"]*1024/page {
		t.Errorf("page size %d, physical pages %d; want %d and MemTotal %d KiB in pages", pages[0], pages[1], page, kib["MemTotal"])
	}
	free := kib["MemFree"] * 1024 / page
	if diff := int64(pages[2]) - int64(free); diff > int64(1<<30/page) || diff < -int64(1<<30/page) {
		t.Errorf("available pages %d, MemFree says %d", pages[2], free)
	}
	if got := writeMemoryPages(nil, 0); got != 0 {
		t.Errorf("memory_pages without a memory answered %d", got)
	}
}

// writeWords, behind loadavg and memory_pages, writes all three words or
// answers 0: a buffer past the guest's memory, even by one word, or
// whose last words would wrap to address 0, gets nothing usable, and
// neither does a host that cannot tell.
func TestWriteWords(t *testing.T) {
	words := [3]uint64{4096, 1 << 40, math.Float64bits(0.25)}
	mem := &fakeMemory{b: make([]byte, 32)}
	if got := writeWords(mem, 8, true, words[:]); got != 3 {
		t.Fatalf("in bounds: %d", got)
	}
	for i, w := range words {
		if v := binary.LittleEndian.Uint64(mem.b[8+8*i:]); v != w {
			t.Errorf("word %d: %d, want %d", i, v, w)
		}
	}
	for _, ptr := range []uint32{16, 32, 1 << 31, math.MaxUint32 - 7} {
		if got := writeWords(mem, ptr, true, words[:]); got != 0 {
			t.Errorf("at %d of a 32-byte memory: %d", ptr, got)
		}
	}
	// A 4 GiB memory takes a word at any offset: the last two words at
	// 2**32-8 would land at 0 and 8.
	whole := &everywhere{}
	if got := writeWords(whole, math.MaxUint32-7, true, words[:]); got != 0 || len(whole.at) != 0 {
		t.Errorf("at 2**32-8: %d, words written at %v", got, whole.at)
	}
	if got := writeWords(mem, 0, false, words[:]); got != 0 {
		t.Errorf("a host that cannot tell: %d", got)
	}
}

// everywhere is a guest memory that takes a word at every offset, as a
// full 4 GiB one would, and records where.
type everywhere struct {
	api.Memory
	at []uint32
}

func (m *everywhere) WriteUint64Le(off uint32, _ uint64) bool {
	m.at = append(m.at, off)
	return true
}
