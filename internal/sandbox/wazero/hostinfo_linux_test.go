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
// all six names, and the open files are the run's limit, whatever this
// process's RLIMIT_NOFILE.
func TestSysconfLimitsAreGlibcs(t *testing.T) {
	_, err := exec.LookPath(sandbox.GuestPython)
	testenv.Need(t, err == nil, sandbox.GuestPython)
	var nofile unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &nofile); err != nil {
		t.Fatal(err)
	}
	limits, ok := sysconfLimits(nofile.Cur)
	if !ok {
		t.Fatal("sysconfLimits cannot tell")
	}
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

	q := &openFiles{max: 256}
	ctx := context.WithValue(context.Background(), openFilesKey{}, q)
	mem := &fakeMemory{b: make([]byte, 8*limitCount)}
	if got := writeLimits(ctx, mem, 0); got != limitCount {
		t.Fatalf("sysconf_limits answered %d", got)
	}
	if open := binary.LittleEndian.Uint64(mem.b[8*limitOpenMax:]); open != 256 {
		t.Errorf("open files %d, the run's limit is 256", open)
	}
	if got := writeLimits(context.Background(), mem, 0); got != 0 {
		t.Errorf("sysconf_limits outside a run answered %d", got)
	}
}
