package wazero

import (
	"context"
	"encoding/binary"
	"math"
	"sync/atomic"
	"testing"
)

func testLimits(fileSize *atomic.Int64) (*guestLimits, *openFiles, *linearMemory) {
	var inherited rlimitTable
	for r := range inherited {
		inherited[r] = [2]uint64{rlimInfinity, rlimInfinity}
	}
	files, mem := &openFiles{max: startFiles}, &linearMemory{limit: 512 << 20}
	if fileSize == nil {
		fileSize = new(atomic.Int64)
	}
	l := newGuestLimits(inherited, files, mem, fileSize)
	l.bind(guestJob{OpenFiles: 256, FileSizeBytes: 256 << 20, CPUSeconds: 70})
	return l, files, mem
}

// setrlimit has Linux's checks for a process without CAP_SYS_RESOURCE:
// a soft limit above its hard one is EINVAL, a raised hard limit or an
// RLIMIT_NOFILE above fs.nr_open EPERM, and a refused call changes nothing.
func TestGuestLimitsChecks(t *testing.T) {
	l, files, _ := testLimits(nil)
	for _, c := range []struct {
		name       string
		resource   int
		soft, hard uint64
		want       int32
	}{
		{"soft above hard", rlimitNofile, 200, 100, rlimitEINVAL},
		{"hard raised", rlimitNofile, 256, 512, rlimitEPERM},
		{"hard raised from 0", rlimitCore, 0, 1, rlimitEPERM},
		{"soft raised to the hard", rlimitCore, 0, 0, rlimitOK},
		{"lowered", rlimitNofile, 100, 200, rlimitOK},
		{"soft raised again, to the new hard", rlimitNofile, 200, 200, rlimitOK},
		{"hard raised back", rlimitNofile, 200, 256, rlimitEPERM},
		{"an unlimited one lowered", rlimitStack, 1 << 20, rlimInfinity, rlimitOK},
		{"another resource lowered past nr_open", rlimitNproc, 1 << 30, 1 << 30, rlimitOK},
	} {
		if got := l.set(rlimitsWhoGuest, c.resource, c.soft, c.hard); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	if got := l.get(rlimitsWhoGuest, rlimitNofile); got != [2]uint64{200, 200} || files.max != 200 {
		t.Errorf("RLIMIT_NOFILE %v, open files bounded at %d; want 200 and 200", got, files.max)
	}
	l2, _, _ := testLimits(nil)
	if got := l2.set(rlimitsWhoGuest, rlimitNofile, 256, nrOpen+1); got != rlimitEPERM {
		t.Errorf("RLIMIT_NOFILE past nr_open: %d", got)
	}
	// pid 1's limits are its own: the guest's changes leave them, and
	// changing them changes nothing of the guest.
	if got := l.get(rlimitsWhoInit, rlimitNofile); got != [2]uint64{256, 256} {
		t.Errorf("pid 1's RLIMIT_NOFILE %v after the guest's", got)
	}
	if got := l.set(rlimitsWhoInit, rlimitNofile, 10, 10); got != rlimitOK || files.max != 200 {
		t.Errorf("pid 1's RLIMIT_NOFILE lowered: %d, the guest's open files %d", got, files.max)
	}
}

// A lowered RLIMIT_AS or RLIMIT_DATA bounds the guest's linear memory, the
// lower of the two; a grow past it fails without being the run's memory
// limit. A lowered RLIMIT_FSIZE bounds the files the guest writes, and a
// soft one raised again up to its hard one lifts that bound as far.
func TestGuestLimitsEffects(t *testing.T) {
	fileSize := new(atomic.Int64)
	fileSize.Store(256 << 20)
	l, _, mem := testLimits(fileSize)
	mem.mapping = make([]byte, 64<<20)
	if l.set(rlimitsWhoGuest, rlimitAs, 32<<20, rlimInfinity) != rlimitOK || l.set(rlimitsWhoGuest, rlimitData, 48<<20, 48<<20) != rlimitOK {
		t.Fatal("lowering RLIMIT_AS and RLIMIT_DATA refused")
	}
	if mem.Reallocate(16<<20) == nil || mem.Reallocate(40<<20) != nil {
		t.Error("the linear memory is not bounded at RLIMIT_AS's 32 MiB")
	}
	if refused, _ := mem.usage(); refused {
		t.Error("a grow past the guest's own limit counted as the run's memory limit")
	}
	if l.set(rlimitsWhoGuest, rlimitAs, rlimInfinity, rlimInfinity) != rlimitOK || mem.Reallocate(40<<20) == nil || mem.Reallocate(60<<20) != nil {
		t.Error("RLIMIT_AS raised again: the linear memory is not bounded at RLIMIT_DATA's 48 MiB")
	}
	if l.set(rlimitsWhoGuest, rlimitData, 0, 0) != rlimitOK || mem.Reallocate(50<<20) != nil {
		t.Error("RLIMIT_DATA 0 left the linear memory room to grow")
	}
	if got := l.set(rlimitsWhoGuest, rlimitFsize, 1<<20, 2<<20); got != rlimitOK || fileSize.Load() != 1<<20 {
		t.Errorf("RLIMIT_FSIZE lowered: %d, files stop at %d", got, fileSize.Load())
	}
	if got := l.set(rlimitsWhoGuest, rlimitFsize, 2<<20, 2<<20); got != rlimitOK || fileSize.Load() != 2<<20 {
		t.Errorf("RLIMIT_FSIZE's soft limit raised to its hard one: %d, files stop at %d", got, fileSize.Load())
	}
}

// rlimit(who, resource, set, limits) reads the new limits and writes the
// old ones; a resource out of range, or a buffer outside the guest's
// memory or wrapping past 2**32, is EINVAL.
func TestRlimitCall(t *testing.T) {
	l, _, _ := testLimits(nil)
	ctx := context.WithValue(context.Background(), rlimitsKey{}, l)
	mem := &fakeMemory{b: make([]byte, 64)}
	binary.LittleEndian.PutUint64(mem.b[8:], 100)
	binary.LittleEndian.PutUint64(mem.b[16:], 200)
	if got := rlimitCall(ctx, mem, rlimitsWhoGuest, rlimitNofile, 1, 8); got != rlimitOK {
		t.Fatalf("setrlimit: %d", got)
	}
	if old := [2]uint64{binary.LittleEndian.Uint64(mem.b[24:]), binary.LittleEndian.Uint64(mem.b[32:])}; old != [2]uint64{256, 256} {
		t.Errorf("the old limits written: %v", old)
	}
	if got := rlimitCall(ctx, mem, rlimitsWhoGuest, rlimitNofile, 0, 8); got != rlimitOK || binary.LittleEndian.Uint64(mem.b[24:]) != 100 {
		t.Errorf("getrlimit after: %d, %d", got, binary.LittleEndian.Uint64(mem.b[24:]))
	}
	for _, c := range []struct {
		resource int32
		ptr      uint32
	}{{-1, 0}, {rlimitCount, 0}, {rlimitNofile, 40}, {rlimitNofile, math.MaxUint32 - 16}} {
		if got := rlimitCall(ctx, mem, rlimitsWhoGuest, c.resource, 0, c.ptr); got != rlimitEINVAL {
			t.Errorf("resource %d at %d: %d", c.resource, c.ptr, got)
		}
	}
	if got := rlimitCall(context.Background(), mem, rlimitsWhoGuest, rlimitNofile, 0, 0); got != rlimitEINVAL {
		t.Errorf("outside a run: %d", got)
	}
}
