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
	for _, parent := range runCgroupParents() {
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
