package wazero

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/tetratelabs/wazero/api"
)

// memModule is the little of api.Module the host functions use: its
// memory.
type memModule struct {
	api.Module
	mem api.Memory
}

func (m memModule) Memory() api.Memory { return m.mem }

// clockMemory is what the clock functions use: eight bytes at offset 0.
type clockMemory struct {
	api.Memory
	b [8]byte
}

func (m *clockMemory) WriteUint64Le(off uint32, v uint64) bool {
	if off != 0 {
		return false
	}
	binary.LittleEndian.PutUint64(m.b[:], v)
	return true
}

// callClock calls clock_time_get(id, 0, ptr), or clock_res_get(id, ptr)
// when res, and returns its errno and the value written.
func callClock(ctx context.Context, id, ptr uint32, res bool) (errno, value uint64) {
	mem := &clockMemory{}
	m := memModule{mem: mem}
	if res {
		stack := []uint64{api.EncodeU32(id), api.EncodeU32(ptr)}
		clockResGet(ctx, m, stack)
		errno = stack[0]
	} else {
		stack := []uint64{api.EncodeU32(id), 0, api.EncodeU32(ptr)}
		clockTimeGet(ctx, m, stack)
		errno = stack[0]
	}
	return errno, binary.LittleEndian.Uint64(mem.b[:])
}

// The CPU-time clocks read the guest's CPU time from its start, in
// nanoseconds, as CLOCK_PROCESS_CPUTIME_ID does natively; the wall and
// monotonic clocks read the host's; an unknown clock is EINVAL and memory
// out of range EFAULT, as in wazero's own functions.
func TestGuestClocks(t *testing.T) {
	cpu := &guestCPU{}
	ctx := context.WithValue(context.Background(), cpuKey{}, cpu)
	var spent, wall int64
	var readings [2][2]uint64 // [process, thread][before, after the loop]
	var errnos []uint64
	total := cpu.run(func() {
		start := time.Now()
		for i, id := range []uint32{clockProcessCPUTimeID, clockThreadCPUTimeID} {
			e, v := callClock(ctx, id, 0, false)
			errnos, readings[i][0] = append(errnos, e), v
		}
		for before := threadCPU(); threadCPU()-before < int64(20*time.Millisecond); {
		}
		for i, id := range []uint32{clockProcessCPUTimeID, clockThreadCPUTimeID} {
			e, v := callClock(ctx, id, 0, false)
			errnos, readings[i][1] = append(errnos, e), v
		}
		spent, wall = cpu.now(), int64(time.Since(start))
	})
	for _, e := range errnos {
		if e != 0 {
			t.Fatalf("errno %d", e)
		}
	}
	for i, r := range readings {
		d := int64(r[1] - r[0])
		if d < int64(20*time.Millisecond) || d > wall || int64(r[1]) > spent {
			t.Errorf("clock %d: %d ns over a 20 ms loop (%d ns of wall time, %d ns in all)", i+2, d, wall, spent)
		}
	}
	if total < spent {
		t.Errorf("run reported %d ns, the clock read %d", total, spent)
	}

	if e, v := callClock(ctx, clockRealtime, 0, false); e != 0 || time.Since(time.Unix(0, int64(v))).Abs() > time.Minute {
		t.Errorf("realtime: errno %d, %v", e, time.Unix(0, int64(v)))
	}
	_, m0 := callClock(ctx, clockMonotonic, 0, false)
	time.Sleep(2 * time.Millisecond)
	if e, m1 := callClock(ctx, clockMonotonic, 0, false); e != 0 || m1-m0 < uint64(2*time.Millisecond) {
		t.Errorf("monotonic: errno %d, advanced %d ns over a 2 ms sleep", e, m1-m0)
	}
	for _, id := range []uint32{clockMonotonic, clockProcessCPUTimeID, clockThreadCPUTimeID} {
		if e, v := callClock(ctx, id, 0, true); e != 0 || v != 1 {
			t.Errorf("resolution of clock %d: errno %d, %d ns", id, e, v)
		}
	}
	if e, v := callClock(ctx, clockRealtime, 0, true); e != 0 || v != realtimeResolution() {
		t.Errorf("realtime resolution: errno %d, %d ns", e, v)
	}

	for _, res := range []bool{false, true} {
		for _, id := range []uint32{10, 12, 1 << 31, ^uint32(5)} { // ^5: -6, a process CPU clock
			if e, _ := callClock(ctx, id, 0, res); e != wasiErrnoInval {
				t.Errorf("clock %d (res %v): errno %d, want EINVAL", id, res, e)
			}
		}
		if e, _ := callClock(ctx, clockMonotonic, 8, res); e != wasiErrnoFault {
			t.Errorf("out of memory (res %v): errno %d, want EFAULT", res, e)
		}
	}
	if e, _ := callClock(context.Background(), clockProcessCPUTimeID, 0, false); e != wasiErrnoInval {
		t.Errorf("CPU clock outside a run: errno %d, want EINVAL", e)
	}
}
