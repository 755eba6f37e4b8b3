package native

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/apysup/apysup/internal/sandbox"
)

// What a supervisor killed with SIGKILL leaves (a guest still running in
// its cgroups, a state directory) is swept by the next Backend.
func TestSweepsRunsOfDeadSupervisors(t *testing.T) {
	testBackend(t)
	dead := exec.Command("/bin/true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadPid := dead.Process.Pid
	guest := exec.Command("/bin/sleep", "600")
	if err := guest.Start(); err != nil {
		t.Fatal(err)
	}
	defer guest.Process.Kill()
	name := fmt.Sprintf("apysup-%d-1", deadPid)
	var made []string
	for _, parent := range runCgroupParents("") {
		dir := filepath.Join(parent, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		made = append(made, dir)
		// Fails where a pid needs more setup (cpuset): the others suffice.
		_ = os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(guest.Process.Pid)), 0)
	}
	base := t.TempDir()
	staleState := filepath.Join(base, fmt.Sprintf("apysup-native-%d-42", deadPid))
	liveState := filepath.Join(base, fmt.Sprintf("apysup-native-%d-43", os.Getppid()))
	for _, d := range []string{staleState, liveState} {
		if err := os.MkdirAll(filepath.Join(d, "rootfs"), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	// As New leaves it: the state dir a private mount of its own, run
	// mounts below it.
	if err := bindSelf(staleState, syscall.MS_PRIVATE); err != nil {
		t.Fatal(err)
	}
	staleMount := filepath.Join(staleState, "runs", "r", "out")
	if err := os.MkdirAll(staleMount, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", staleMount, "tmpfs", 0, "size=64k"); err != nil {
		t.Fatal(err)
	}

	b, err := New(Config{GuestFiles: guestFiles(), StateDir: base})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	err = guest.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("stale guest not killed: %v", err)
	}
	for _, dir := range made {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("stale cgroup %s left: %v", dir, err)
		}
	}
	if _, err := os.Stat(staleState); !os.IsNotExist(err) {
		t.Errorf("stale state dir left: %v", err)
	}
	if _, err := os.Stat(liveState); err != nil {
		t.Errorf("a live supervisor's state dir was swept: %v", err)
	}
}

// Runs can live under a cgroup parent of the caller's choosing (needed on
// cgroup v2 hosts); nothing is left there either.
func TestCgroupParent(t *testing.T) {
	testBackend(t)
	parent := fmt.Sprintf("/apysup-test-%d", os.Getpid())
	b, err := New(Config{GuestFiles: guestFiles(), CgroupParent: parent})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	script := "print(open('/proc/self/cgroup').read().count('apysup'))\n"
	out := run(t, b, script, sandbox.Limits{})
	if out.Status != sandbox.StatusOK || out.Usage.PeakMemoryBytes == 0 {
		t.Fatalf("status %s usage %+v stderr %q", out.Status, out.Usage, out.Stderr)
	}
	for _, dir := range runCgroupParents(parent) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() {
				t.Errorf("cgroup left: %s/%s", dir, e.Name())
			}
		}
		// The parent itself is the caller's; this test made it, so removes it.
		if err := os.Remove(dir); err != nil {
			t.Error(err)
		}
	}
}

func TestDeadOwner(t *testing.T) {
	dead := exec.Command("/bin/true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	d, live := dead.Process.Pid, os.Getppid()
	for _, tc := range []struct {
		prefix, name string
		want         bool
	}{
		{runCgroupPrefix, fmt.Sprintf("apysup-%d-3", d), true},
		{runCgroupPrefix, fmt.Sprintf("apysup-%d-3", live), false},
		{runCgroupPrefix, fmt.Sprintf("apysup-%d-3", os.Getpid()), false},
		{runCgroupPrefix, fmt.Sprintf("apysup-native-%d-3", d), false},
		{runCgroupPrefix, fmt.Sprintf("apysup-%d-x", d), false},
		{runCgroupPrefix, fmt.Sprintf("apysup-%d", d), false},
		{stateDirPrefix, fmt.Sprintf("apysup-native-%d-12345", d), true},
		{stateDirPrefix, "apysup-native-uids-1500000", false},
		{stateDirPrefix, "apysup-native-0-1", false},
	} {
		if got := deadOwner(tc.prefix, tc.name); got != tc.want {
			t.Errorf("deadOwner(%q, %q) = %v", tc.prefix, tc.name, got)
		}
	}
}

func TestZombieSupervisorCountsAsDead(t *testing.T) {
	// A child that has exited but is not reaped yet is a zombie.
	z := exec.Command("/bin/true")
	if err := z.Start(); err != nil {
		t.Fatal(err)
	}
	defer z.Wait()
	for i := 0; alive(z.Process.Pid); i++ {
		if i > 1000 {
			t.Fatal("the child never exited")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !deadOwner(runCgroupPrefix, fmt.Sprintf("apysup-%d-1", z.Process.Pid)) {
		t.Fatal("a zombie owner counts as alive")
	}
	if !alive(os.Getpid()) {
		t.Fatal("this process counts as dead")
	}
}
