package wazero

import (
	"context"
	"encoding/binary"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/testenv"
)

// sysconf_limits answers what glibc's sysconf answers a process with this
// one's rlimits, asked through the guest interpreter's own os.sysconf, for
// all six names, and follows the limits the guest sets itself.
func TestSysconfLimitsAreGlibcs(t *testing.T) {
	_, err := exec.LookPath(sandbox.GuestPython)
	testenv.Need(t, err == nil, sandbox.GuestPython)
	var nofile unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &nofile); err != nil {
		t.Fatal(err)
	}
	l := newGuestLimits(inheritedLimits(), &openFiles{}, &linearMemory{}, nil)
	l.bind(guestJob{OpenFiles: nofile.Cur, FileSizeBytes: 1 << 30, CPUSeconds: 70})
	limits := l.sysconfLimits()
	names := [limitCount]string{"SC_ARG_MAX", "SC_CHILD_MAX", "SC_NGROUPS_MAX", "SC_OPEN_MAX", "SC_SIGQUEUE_MAX", "SC_MINSIGSTKSZ"}
	out, err := exec.Command(sandbox.GuestPython, "-I", "-S", "-c",
		"import os, sys; print(*(os.sysconf(n) for n in sys.argv[1:]))", names[0], names[1], names[2], names[3], names[4], names[5]).Output()
	if err != nil {
		t.Fatalf("%s: %v", sandbox.GuestPython, err)
	}
	glibc := strings.Fields(string(out))
	if len(glibc) != limitCount {
		t.Fatalf("glibc answered %q", out)
	}
	for i, name := range names {
		if got := strconv.FormatInt(int64(limits[i]), 10); got != glibc[i] {
			t.Errorf("%s: %s, glibc %s", name, got, glibc[i])
		}
	}

	// The guest's own limits move them: a lowered RLIMIT_NOFILE and
	// RLIMIT_STACK, as glibc reads them.
	if errno := l.set(rlimitsWhoGuest, rlimitNofile, 100, nofile.Cur); errno != rlimitOK {
		t.Fatalf("lowering RLIMIT_NOFILE: %d", errno)
	}
	if errno := l.set(rlimitsWhoGuest, rlimitStack, 256<<10, l.get(rlimitsWhoGuest, rlimitStack)[1]); errno != rlimitOK {
		t.Fatalf("lowering RLIMIT_STACK: %d", errno)
	}
	if limits := l.sysconfLimits(); limits[limitOpenMax] != 100 || limits[limitArgMax] != glibcArgMax {
		t.Errorf("after setrlimit: open files %d, argument space %d; want 100 and %d", limits[limitOpenMax], limits[limitArgMax], glibcArgMax)
	}

	mem := &fakeMemory{b: make([]byte, 8*limitCount)}
	ctx := context.WithValue(context.Background(), rlimitsKey{}, l)
	if got := writeLimits(ctx, mem, 0); got != limitCount {
		t.Fatalf("sysconf_limits answered %d", got)
	}
	if open := binary.LittleEndian.Uint64(mem.b[8*limitOpenMax:]); open != 100 {
		t.Errorf("open files %d, the guest's limit is 100", open)
	}
	if got := writeLimits(context.Background(), mem, 0); got != 0 {
		t.Errorf("sysconf_limits outside a run answered %d", got)
	}
}

// The limits a guest starts with are its native twin's: the supervisor's,
// as this process has them, but the ones the native sandbox sets.
func TestGuestLimitsStartAsNatives(t *testing.T) {
	l := newGuestLimits(inheritedLimits(), &openFiles{}, &linearMemory{}, nil)
	l.bind(guestJob{OpenFiles: 256, FileSizeBytes: 256 << 20, CPUSeconds: 70})
	want := map[int][2]uint64{rlimitCPU: {70, 71}, rlimitFsize: {256 << 20, 256 << 20}, rlimitNofile: {256, 256},
		rlimitCore: {0, 0}, rlimitNice: {0, 0}, rlimitRtprio: {0, 0}}
	for r := 0; r < rlimitCount; r++ {
		var own unix.Rlimit
		if err := unix.Prlimit(0, r, nil, &own); err != nil {
			t.Fatal(err)
		}
		w, set := want[r]
		if !set {
			w = [2]uint64{own.Cur, own.Max}
		}
		if got := l.get(rlimitsWhoGuest, r); got != w {
			t.Errorf("resource %d: %v, want %v", r, got, w)
		}
		if got := l.get(rlimitsWhoInit, r); got != w {
			t.Errorf("pid 1's resource %d: %v, want %v", r, got, w)
		}
	}
}
