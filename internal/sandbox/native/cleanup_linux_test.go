package native

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/moby/sys/mountinfo"
	"github.com/sirupsen/logrus"

	"github.com/apysup/apysup/internal/sandbox"
)

// assertClean checks that no run of b left anything behind: processes,
// cgroups, mounts, run directories, container state, host ids.
func assertClean(t *testing.T, b *Backend) {
	t.Helper()
	for _, dir := range []string{b.runsDir, b.containersDir} {
		if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
			t.Errorf("%s holds %v (%v)", dir, entries, err)
		}
	}
	for _, dir := range ownCgroupDirs(t) {
		matches, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("apysup-%d-*", os.Getpid())))
		if len(matches) != 0 {
			t.Errorf("cgroups left: %v", matches)
		}
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mi), "\n") {
		// The Backend's own mounts, of its state dir (private) and of its
		// containers and runs dirs (tmpfs), stay until Close.
		if strings.Contains(line, b.stateDir+"/") && !strings.Contains(line, " "+b.containersDir+" ") && !strings.Contains(line, " "+b.runsDir+" ") {
			t.Errorf("mount left: %s", line)
		}
	}
	if pids := descendants(t); len(pids) != 0 {
		t.Errorf("processes left: %v", pids)
	}
	b.uids.mu.Lock()
	for i, used := range b.uids.used {
		if used {
			t.Errorf("uid slot %d still taken", i)
		}
	}
	b.uids.mu.Unlock()
}

func ownCgroupDirs(t *testing.T) []string {
	dirs := runCgroupParents("")
	if len(dirs) == 0 {
		t.Fatal("no cgroup directories found")
	}
	return dirs
}

// descendants lists the processes below this one (runs are its children).
func descendants(t *testing.T) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	parent := map[int]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut at the last ')'.
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) > 1 {
			parent[pid], _ = strconv.Atoi(fields[1])
		}
	}
	var out []int
	for pid := range parent {
		for p := parent[pid]; p > 1; p = parent[p] {
			if p == os.Getpid() {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// waitForFile polls for a marker the guest writes into its workspace.
func waitForFile(t *testing.T, path string) {
	t.Helper()
	for i := 0; ; i++ {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if i > 3000 {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

const sleeper = "import os, time\nif os.fork() == 0:\n    time.sleep(600)\nopen('/workspace/started', 'w').close()\ntime.sleep(600)\n"

func TestCleanupAfterCancel(t *testing.T) {
	b := testBackend(t)
	job := newJob(t, sleeper)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		waitForFile(t, filepath.Join(job.WorkspaceDir, "started"))
		cancel()
	}()
	out, err := b.Run(ctx, job, sandbox.Limits{})
	if !errors.Is(err, context.Canceled) || out.Status != sandbox.StatusKilled || out.ErrorCode != CodeCanceled {
		t.Fatalf("err %v status %s code %s stderr %q", err, out.Status, out.ErrorCode, out.Stderr)
	}
	assertClean(t, b)
	assertWorkspaceReturned(t, job.WorkspaceDir)
}

// startSleeper starts the sleeper through the phases API and returns once it
// runs, with the host pid of its pid 1. The caller waits for and destroys it.
func startSleeper(t *testing.T, b *Backend) (*Sandbox, sandbox.Job, int) {
	t.Helper()
	job := newJob(t, sleeper)
	s, err := b.Prepare(context.Background(), sandbox.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Destroy() })
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if err := s.Assign(job); err != nil {
		t.Fatal(err)
	}
	waitForFile(t, filepath.Join(job.WorkspaceDir, "started"))
	st, err := s.container.State()
	if err != nil {
		t.Fatal(err)
	}
	return s, job, st.InitProcessPid
}

func TestCleanupAfterGuestSIGKILL(t *testing.T) {
	b := testBackend(t)
	s, job, pid := startSleeper(t, b)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	out, err := s.Wait(context.Background())
	if err != nil || out.Status != sandbox.StatusError || out.ErrorCode != CodeKilledBySignal+":SIGKILL" {
		t.Fatalf("err %v status %s code %s", err, out.Status, out.ErrorCode)
	}
	if err := s.Destroy(); err != nil {
		t.Fatal(err)
	}
	if tm := out.Timings; tm.Prepare <= 0 || tm.Start <= 0 || tm.Run <= 0 || tm.Destroy <= 0 {
		t.Errorf("timings of the phases API incomplete: %+v", tm)
	}
	assertClean(t, b)
	assertWorkspaceReturned(t, job.WorkspaceDir)
	if entries, _ := os.ReadDir(job.RunDir); len(entries) != 0 {
		t.Errorf("RunDir holds %v", entries)
	}
}

func assertWorkspaceReturned(t *testing.T, ws string) {
	t.Helper()
	filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Error(err)
			return nil
		}
		fi, err := os.Lstat(p)
		if err == nil && fi.Sys().(*syscall.Stat_t).Uid != uint32(os.Getuid()) {
			t.Errorf("%s still owned by uid %d", p, fi.Sys().(*syscall.Stat_t).Uid)
		}
		return nil
	})
}

// A state directory whose path /proc/self/mountinfo has to escape (a space,
// a tab) is still unmounted and removed by Close.
func TestStateDirWithEscapedPath(t *testing.T) {
	testBackend(t) // the host checks
	base := filepath.Join(t.TempDir(), "state dir\twith blanks")
	if err := os.Mkdir(base, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{GuestFiles: guestFiles(), StateDir: base})
	if err != nil {
		t.Fatal(err)
	}
	if out := run(t, b, "print('ok')\n", sandbox.Limits{}); out.Status != sandbox.StatusOK {
		t.Fatalf("status %s stderr %q", out.Status, out.Stderr)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(base); err != nil || len(entries) != 0 {
		t.Errorf("state base holds %v (%v)", entries, err)
	}
	mounts, err := mountinfo.GetMounts(mountinfo.PrefixFilter(base))
	if err != nil || len(mounts) != 0 {
		t.Errorf("mounts left under %q: %d (%v)", base, len(mounts), err)
	}
}

// A state directory under the binary's own directory (the binary in /tmp
// and the state in /tmp too) still gets each container's init sealed by
// libcontainer's overlayfs, not by a copy of the whole binary into a memfd
// for every container (see containersMountData). libcontainer says which
// at debug level, for tests.
func TestBinarySealedWithoutCopy(t *testing.T) {
	testBackend(t) // the host checks
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	base, err := os.MkdirTemp(filepath.Dir(exe), "state-under-binary-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	seals := &sealLog{}
	level, out := logrus.GetLevel(), logrus.StandardLogger().Out
	logrus.SetLevel(logrus.DebugLevel)
	logrus.SetOutput(io.Discard)
	logrus.AddHook(seals)
	t.Cleanup(func() {
		logrus.StandardLogger().ReplaceHooks(make(logrus.LevelHooks))
		logrus.SetLevel(level)
		logrus.SetOutput(out)
	})
	b, err := New(Config{GuestFiles: guestFiles(), StateDir: base})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if out := run(t, b, "pass\n", sandbox.Limits{}); out.Status != sandbox.StatusOK {
		t.Fatalf("status %s stderr %q", out.Status, out.Stderr)
	}
	overlay, copied := seals.counts()
	if overlay == 0 || copied != 0 {
		t.Errorf("the container's init was sealed by overlayfs %d times and copied %d times; want only overlayfs", overlay, copied)
	}
}

// sealLog counts libcontainer's debug messages about how it sealed the
// binary of a container's init.
type sealLog struct {
	mu              sync.Mutex
	overlay, copied int
}

func (l *sealLog) Levels() []logrus.Level { return []logrus.Level{logrus.DebugLevel} }

func (l *sealLog) Fire(e *logrus.Entry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case strings.Contains(e.Message, "using overlayfs for sealed /proc/self/exe"):
		l.overlay++
	case strings.Contains(e.Message, "falling back to making a temporary copy"):
		l.copied++
	}
	return nil
}

func (l *sealLog) counts() (overlay, copied int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.overlay, l.copied
}

// The Backend's containers and runs directories are tmpfs mounts of its
// own, whatever file system its state directory is on (a mkdir on this
// VM's ext4 cost 0.45 ms, on a tmpfs 4 us: RATIONALE.md, "Run directories
// live on a tmpfs, wherever the state directory is").
func TestStateDirsAreTmpfs(t *testing.T) {
	b := testBackend(t)
	for _, dir := range []string{b.containersDir, b.runsDir} {
		m, err := mountinfo.GetMounts(mountinfo.SingleEntryFilter(dir))
		if err != nil || len(m) != 1 || m[0].FSType != "tmpfs" {
			t.Errorf("%s: mounts %v (%v), want one tmpfs", dir, m, err)
		}
	}
}
