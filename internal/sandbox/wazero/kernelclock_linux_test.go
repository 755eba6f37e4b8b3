package wazero

import (
	"context"
	"testing"

	"golang.org/x/sys/unix"
)

// Linux's clocks beyond WASI's read as this kernel reads them for the
// native guest: each value between two of the host's own readings, the
// same resolution, and EINVAL where the kernel answers it.
func TestKernelClocks(t *testing.T) {
	for _, id := range kernelClockIDs {
		before, hostOK := hostClock(t, id)
		e, v := callClock(context.Background(), id, 0, false)
		after, _ := hostClock(t, id)
		if !hostOK {
			if e != wasiErrnoInval {
				t.Errorf("clock %d, which this host has not: errno %d, want EINVAL", id, e)
			}
			continue
		}
		if e != 0 || int64(v) < before || int64(v) > after {
			t.Errorf("clock %d: errno %d, %d ns, the host's %d to %d", id, e, v, before, after)
		}
		var res unix.Timespec
		if err := unix.ClockGetres(int32(id), &res); err != nil {
			t.Fatalf("clock %d: the host's resolution: %v", id, err)
		}
		if e, v := callClock(context.Background(), id, 0, true); e != 0 || int64(v) != res.Nano() {
			t.Errorf("clock %d resolution: errno %d, %d ns, the host's %d", id, e, v, res.Nano())
		}
	}
}

// hostClock reads clock id here: its nanoseconds, or false with EINVAL.
func hostClock(t *testing.T, id uint32) (int64, bool) {
	t.Helper()
	var ts unix.Timespec
	switch err := unix.ClockGettime(int32(id), &ts); err {
	case nil:
		return ts.Nano(), true
	case unix.EINVAL:
		return 0, false
	default:
		t.Fatalf("clock %d: %v", id, err)
		return 0, false
	}
}
