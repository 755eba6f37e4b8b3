package integration

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/supervisor"
)

// processesOf lists this process's descendants that run as host uid: what
// is left of a run whose guest reported that uid. (The native backend
// hands out uids round-robin, so no later run of this process has it.)
func processesOf(uid int) []int {
	var out []int
	for _, pid := range descendants() {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" && f[1] == strconv.Itoa(uid) {
				out = append(out, pid)
			}
		}
	}
	return out
}

// assertGone checks that no process of the run that reported host_uid is
// left (polling briefly: the kernel reaps a killed tree asynchronously).
func assertGone(t *testing.T, m markers) {
	t.Helper()
	var uid int
	m.infoAs(t, "host_uid", &uid)
	if uid < 1000 {
		t.Fatalf("guest host uid %d", uid)
	}
	var left []int
	for i := 0; i < 50; i++ {
		if left = processesOf(uid); len(left) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("processes of host uid %d outlived their run: %v", uid, left)
}

// TestForkBombIsContained: under Pids=64 the bomb meets EAGAIN, the run
// ends, and none of its processes outlive it.
func TestForkBombIsContained(t *testing.T) {
	t.Parallel()
	need(t)
	began := time.Now()
	res := runGuest(t, "forkbomb.py", sandbox.Limits{Pids: 64, Timeout: 60 * time.Second})
	t.Logf("fork bomb: %s in %v, usage %+v", res.Status, time.Since(began).Round(time.Millisecond), res.Usage)
	switch res.Status {
	case sandbox.StatusOK, sandbox.StatusError:
	default:
		t.Fatalf("guest: %s", summary(res))
	}
	m := parseMarkers(t, res)
	m.expect(t, map[string]string{"fork:pids": "EAGAIN"})
	var forked int
	m.infoAs(t, "forked", &forked)
	// The guest init (pid 1) and the script hold two of the 64.
	if forked < 1 || forked > 62 {
		t.Errorf("the script forked %d children under pids=64", forked)
	}
	if res.Usage.Pids > 64 {
		t.Errorf("pids peak %d above the limit of 64", res.Usage.Pids)
	}
	assertGone(t, m)
}

// TestOrphansAreReaped: 20 double-forked orphans under Pids=8. Each is
// reparented to pid 1 of the guest (the guest init) and
// reaped by it, so no zombie is left behind and the forks never exhaust
// the limit (a script that was pid 1 itself reaped nothing).
func TestOrphansAreReaped(t *testing.T) {
	t.Parallel()
	need(t)
	const orphans, pids = 20, 8
	res := runGuest(t, "orphans.py", sandbox.Limits{Pids: pids}, strconv.Itoa(orphans))
	if res.Status != sandbox.StatusOK {
		t.Fatalf("guest: %s", summary(res))
	}
	m := parseMarkers(t, res)
	m.expect(t, nil, "orphans")
	var zombies []int
	m.infoAs(t, "zombies", &zombies)
	if len(zombies) != 0 {
		t.Errorf("zombies left in the guest after %d orphans: %v", orphans, zombies)
	}
	if res.Usage.Pids > pids {
		t.Errorf("pids peak %d above the limit of %d", res.Usage.Pids, pids)
	}
	t.Logf("pids peak %d of %d after %d orphans", res.Usage.Pids, pids, orphans)
	assertGone(t, m)
}

// TestOutputHeldInFlight: a guest that keeps copies of its stdout and
// stderr alive past its end, in flight in a loop of its own Unix sockets
// that only the kernel's garbage collector frees, does not hold the run's
// result: it came when the collector ran, minutes later or never (the
// fourth hostile-guest hunt). The output written before the end is whole.
func TestOutputHeldInFlight(t *testing.T) {
	t.Parallel()
	need(t)
	res, took := runGuestTimed(t, "inflight.py", sandbox.Limits{Timeout: 20 * time.Second}, sandbox.StatusOK)
	if !strings.Contains(res.Stdout, "before\n") || !strings.HasSuffix(res.Stdout, "after 1999 "+strings.Repeat("x", 60)+"\n") {
		t.Errorf("output not whole: %d bytes, ending %q", len(res.Stdout), res.Stdout[max(0, len(res.Stdout)-80):])
	}
	if took > 15*time.Second { // a hang is minutes; the run itself well under a second
		t.Errorf("the result came %v after the start", took)
	}
	m := parseMarkers(t, res)
	m.expect(t, nil, "parked")
	assertGone(t, m)
}

// runGuestTimed runs the guest script name under limits, wants status,
// and reports how long the run took to return.
func runGuestTimed(t *testing.T, name string, limits sandbox.Limits, status sandbox.Status) (*supervisor.Result, time.Duration) {
	t.Helper()
	began := time.Now()
	res := runGuest(t, name, limits)
	took := time.Since(began)
	t.Logf("%s under a %v timeout returned after %v", name, limits.Timeout, took.Round(time.Millisecond))
	if res.Status != status {
		t.Fatalf("guest: %s", summary(res))
	}
	return res, took
}

// TestMemoryLimit: a 4 GiB allocation under 256 MiB ends as memory_limit.
func TestMemoryLimit(t *testing.T) {
	t.Parallel()
	need(t)
	res := runGuest(t, "report_host_uid()\nb = b'x' * (4 << 30)\nemit('ESCAPED', 'alloc:4GiB', len(b))\n",
		sandbox.Limits{MemoryBytes: 256 << 20})
	if res.Status != sandbox.StatusMemoryLimit {
		t.Fatalf("guest: %s", summary(res))
	}
	if res.Usage.PeakMemoryBytes > 256<<20 {
		t.Errorf("peak memory %d above the 256 MiB limit", res.Usage.PeakMemoryBytes)
	}
	m := parseMarkers(t, res)
	m.expect(t, nil)
	assertGone(t, m)
}

// TestTimeout: a CPU spin (and a spinning child) under Timeout=2s ends as
// timeout, the run returns soon after, and the tree is gone.
func TestTimeout(t *testing.T) {
	t.Parallel()
	need(t)
	res, took := runGuestTimed(t, "spin.py", sandbox.Limits{Timeout: 2 * time.Second}, sandbox.StatusTimeout)
	if took > 20*time.Second {
		t.Errorf("the run took %v to end after a 2 s timeout", took)
	}
	// On a loaded machine the guest may not even reach its first line in
	// 2 s; the status is what counts, and the final check catches leftovers.
	m := parseMarkers(t, res)
	if !m.allowed["spinning"] {
		t.Logf("the guest timed out before it started spinning: %s", summary(res))
		return
	}
	m.expect(t, nil, "spinning")
	assertGone(t, m)
}

// TestFillingIsBounded: /tmp fills up (bytes and inodes) with ENOSPC seen
// by the guest, /dev/shm too (bytes, with /tmp's caps), a workspace file stops at RLIMIT_FSIZE with EFBIG, and
// /tmp is usable again once the guest frees it.
func TestFillingIsBounded(t *testing.T) {
	t.Parallel()
	need(t)
	const tmpBytes, fileBytes = 4 << 20, 6 << 20 // the tmpfs fills before the file size limit
	res := runGuest(t, "fill.py", sandbox.Limits{TmpBytes: tmpBytes, FileSizeBytes: fileBytes})
	if res.Status != sandbox.StatusOK {
		t.Fatalf("guest: %s", summary(res))
	}
	m := parseMarkers(t, res)
	m.expect(t, map[string]string{"tmp:bytes": "ENOSPC", "tmp:inodes": "ENOSPC", "shm:bytes": "ENOSPC", "workspace:fsize": "EFBIG",
		"rlimit:RLIMIT_FSIZE": "ValueError", "rlimit:RLIMIT_NOFILE": "ValueError", "rlimit:RLIMIT_CORE": "ValueError"},
		"tmp:usable-again")
	var filled, files, big int64
	var statfs struct{ Bytes, Inodes int64 }
	m.infoAs(t, "tmp_filled", &filled)
	m.infoAs(t, "tmp_files", &files)
	m.infoAs(t, "workspace_big", &big)
	m.infoAs(t, "tmp_statvfs", &statfs)
	t.Logf("/tmp: %+v; filled %d bytes, %d files; workspace file stopped at %d", statfs, filled, files, big)
	if statfs.Bytes != tmpBytes || filled > tmpBytes {
		t.Errorf("/tmp holds %d bytes (filled %d), want a %d-byte cap", statfs.Bytes, filled, tmpBytes)
	}
	var shmFilled int64
	var shmStatfs struct{ Bytes, Inodes int64 }
	m.infoAs(t, "shm_filled", &shmFilled)
	m.infoAs(t, "shm_statvfs", &shmStatfs)
	if shmStatfs != statfs || shmFilled > tmpBytes {
		t.Errorf("/dev/shm: %+v (filled %d bytes), want /tmp's caps %+v", shmStatfs, shmFilled, statfs)
	}
	if files >= statfs.Inodes || files < 100 {
		t.Errorf("%d files in /tmp with %d inodes", files, statfs.Inodes)
	}
	if big != fileBytes {
		t.Errorf("workspace file stopped at %d bytes, want RLIMIT_FSIZE %d", big, fileBytes)
	}
}

// TestStdoutFlood: 100 MiB on stdout is cut at the 1 MiB default and
// flagged; the supervisor's own memory growth is logged (not asserted: it
// is shared with the tests running in parallel).
func TestStdoutFlood(t *testing.T) {
	t.Parallel()
	need(t)
	before := vmHWM()
	res := runGuest(t, "chunk = b'x' * (1 << 20)\nfor _ in range(100):\n    sys.stdout.buffer.write(chunk)\nsys.stdout.flush()\nsys.stderr.write('flooded')\n",
		sandbox.Limits{})
	t.Logf("peak RSS of the test process: %d MiB before, %d MiB after the flood", before>>20, vmHWM()>>20)
	if res.Status != sandbox.StatusOK {
		t.Fatalf("guest: status %s code %s stderr %q", res.Status, res.ErrorCode, clip(res.Stderr, 2000))
	}
	limit := sandbox.DefaultLimits().OutputBytes
	if !res.StdoutTruncated || len(res.Stdout) > limit || len(res.Stdout) < limit/2 {
		t.Errorf("stdout %d bytes, truncated %v: want at most %d and the flag", len(res.Stdout), res.StdoutTruncated, limit)
	}
	if res.Stderr != "flooded" || res.StderrTruncated {
		t.Errorf("stderr %q truncated %v", clip(res.Stderr, 200), res.StderrTruncated)
	}
}

// TestCPUQuota: four processes spinning for three seconds get no more
// than the half CPU of their limit (a generous bound on cgroup CPU time
// against the run's wall time). Half a CPU, so that the bound binds on any
// host, one core included.
func TestCPUQuota(t *testing.T) {
	t.Parallel()
	need(t)
	script := "import time\nfor _ in range(3):\n    if os.fork() == 0:\n        break\nend = time.monotonic() + 3\nwhile time.monotonic() < end:\n    pass\n"
	res := runGuest(t, script, sandbox.Limits{CPUs: 0.5})
	if res.Status != sandbox.StatusOK {
		t.Fatalf("guest: %s", summary(res))
	}
	wall := time.Duration(res.Timings.RunMs * float64(time.Millisecond))
	cpu := time.Duration(res.Usage.CPUTimeNs)
	t.Logf("4 spinners: %v of CPU in %v (%d host CPUs)", cpu.Round(time.Millisecond), wall.Round(time.Millisecond), runtime.NumCPU())
	if cpu == 0 {
		t.Fatalf("no CPU usage measured: %+v", res.Usage)
	}
	if cpu > wall*5/8+250*time.Millisecond {
		t.Errorf("the run used %v of CPU in %v of wall time under a 0.5-CPU quota", cpu, wall)
	}
}
