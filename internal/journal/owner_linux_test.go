package journal

import (
	"fmt"
	"os/exec"
	"testing"
	"time"
)

// A process that runs owns its runs; once it has exited it does not, even
// while it is a zombie its parent has not reaped (a server killed with
// SIGKILL whose parent is slow to wait: its key was idempotency_key_in_use
// until then).
func TestOwnerAliveUntilItExits(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "read line")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	owner := fmt.Sprintf("pid:%d:%s", pid, startTime(pid))
	if !OwnerAlive(owner) {
		t.Fatal("a running owner counts as dead")
	}
	stdin.Close() // it exits, and stays a zombie until Wait
	deadline := time.Now().Add(10 * time.Second)
	for state, _ := procStat(pid); state != "Z"; state, _ = procStat(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the child did not exit: state %q", state)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if OwnerAlive(owner) {
		t.Error("a zombie owner counts as alive")
	}
	_ = cmd.Wait()
	if OwnerAlive(owner) {
		t.Error("a reaped owner counts as alive")
	}
	if !OwnerAlive("garbage") {
		t.Error("a malformed owner must count as alive (fail closed)")
	}
}
