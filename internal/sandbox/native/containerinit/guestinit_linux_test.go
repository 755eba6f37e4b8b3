package containerinit

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/apysup/apysup/internal/testenv"
)

// guestInit starts this test binary as the C init of guestinit_linux.c,
// pid 1 of a new pid namespace, running sh -c script; it returns the
// command and the outcome file's path.
func guestInit(t *testing.T, script string) (*exec.Cmd, string) {
	t.Helper()
	testenv.NeedRoot(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	outcome := filepath.Join(t.TempDir(), "outcome.json")
	argv := GuestInitArgv(outcome, []string{"/bin/sh", "-c", script})
	cmd := exec.Command(exe, argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	return cmd, outcome
}

// exitOf runs cmd and returns its exit status, failing on a death by signal.
func exitOf(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Run()
	if err == nil {
		return 0
	}
	ee, ok := err.(*exec.ExitError)
	if !ok || !ee.Exited() {
		t.Fatalf("the guest init: %v", err)
	}
	return ee.ExitCode()
}

// The command's own exit status is pid 1's, however large, and no outcome
// is written: exit(139) is not a death by SIGSEGV.
func TestGuestInitExitStatus(t *testing.T) {
	for _, code := range []int{0, 3, 139} {
		cmd, outcome := guestInit(t, fmt.Sprint("exit ", code))
		if got := exitOf(t, cmd); got != code {
			t.Errorf("exit %d: pid 1 exited %d", code, got)
		}
		if _, err := os.Stat(outcome); !os.IsNotExist(err) {
			t.Errorf("exit %d: an outcome file (%v)", code, err)
		}
	}
}

// A command killed by a signal is written into the outcome, and pid 1
// exits 128+N.
func TestGuestInitReportsSignal(t *testing.T) {
	cmd, outcome := guestInit(t, "kill -SEGV $$")
	if got := exitOf(t, cmd); got != 128+11 {
		t.Fatalf("pid 1 exited %d", got)
	}
	b, err := os.ReadFile(outcome)
	if want := `{"exit_code":139,"result_set":false,"signal":11}`; err != nil || string(b) != want {
		t.Fatalf("outcome %q (%v), want %s", b, err, want)
	}
}

// A signal sent to pid 1 reaches the command.
func TestGuestInitForwardsSignals(t *testing.T) {
	cmd, outcome := guestInit(t, "trap 'echo got TERM; exit 7' TERM; echo ready; while :; do sleep 0.01; done")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "ready" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the command did not start: %q", lines.Text())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !lines.Scan() || lines.Text() != "got TERM" {
		t.Errorf("the command's output after SIGTERM to pid 1: %q", lines.Text())
	}
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 7 {
		t.Errorf("pid 1: %v, want exit status 7", err)
	}
	if _, err := os.Stat(outcome); !os.IsNotExist(err) {
		t.Errorf("an outcome file (%v)", err)
	}
}

// The init refuses to run but as pid 1, with its arguments complete.
func TestGuestInitRefusals(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"not pid 1":        GuestInitArgv("/tmp/outcome.json", []string{"/bin/true"})[1:],
		"no command":       {guestInitFlag, "/tmp/outcome.json", "--"},
		"relative outcome": {guestInitFlag, "outcome.json", "--", "/bin/true"},
		"no separator":     {guestInitFlag, "/tmp/outcome.json", "/bin/true", "x"},
	} {
		out, err := exec.Command(exe, args...).CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 || !strings.HasPrefix(string(out), "apysup guest init: ") {
			t.Errorf("%s: %v %q, want exit status 2 and the init's message", name, err, out)
		}
	}
}

// The command is always pid 10 of its namespace (COMMAND_PID), however
// many pids were taken before it; here none were, and pid 1's children
// took 2 to 9 and are gone.
func TestGuestInitCommandPid(t *testing.T) {
	cmd, _ := guestInit(t, `echo "$$"`)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the guest init: %v", err)
	}
	if got := strings.Fields(string(out)); len(got) == 0 || got[0] != "10" {
		t.Errorf("the command's pid: %q, want 10", out)
	}
}
