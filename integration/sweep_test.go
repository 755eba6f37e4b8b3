package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/supervisor"
	"github.com/apysup/apysup/plan"
)

// sweepChildEnv makes the test binary a supervisor holding a pool with
// runs in flight in the state directory it names (see pooledChild).
const sweepChildEnv = "APYSUP_TEST_POOLED_CHILD"

// pooledChild runs sleeping scripts through a pooled Supervisor, creates
// state+".ready" once its pool is full and its runs have started, and then
// waits to be killed.
func pooledChild(state string) int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "pooled child:", err); return 1 }
	r, err := plan.NewRegistry(16)
	if err != nil {
		return fail(err)
	}
	p, err := r.Seal()
	if err != nil {
		return fail(err)
	}
	script := state + ".py"
	if err := os.WriteFile(script, []byte("import time\ntime.sleep(600)\n"), 0o644); err != nil {
		return fail(err)
	}
	sup := supervisor.New(supervisor.Config{StateDir: state, NativePool: 2})
	if err := sup.Prepare(); err != nil {
		return fail(err)
	}
	for range 3 {
		go sup.Run(context.Background(), supervisor.Request{Plan: p, Handlers: broker.NewHandlers(),
			Surface: plan.SurfaceProgrammatic, Parent: "main", Backend: supervisor.BackendNative, BackendSource: "default",
			ScriptPath: script, Limits: sandbox.Limits{Timeout: 10 * time.Minute}})
	}
	for {
		if st := sup.PoolState(); st.Ready >= 2 && st.Taken+st.Cold >= 3 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Second) // the runs' guests start
	if err := os.WriteFile(state+".ready", nil, 0o644); err != nil {
		return fail(err)
	}
	select {}
}

// A supervisor killed with SIGKILL while it holds a pool and runs in
// flight leaves guests, cgroups, mounts and directories behind; the next
// supervisor in the same state directory sweeps all of it before its first
// run starts.
func TestKilledPoolIsSwept(t *testing.T) {
	need(t) // the host checks
	state, err := os.MkdirTemp("", "aps")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(state)
	defer os.Remove(state + ".py")
	defer os.Remove(state + ".ready")
	if err := os.Chmod(state, 0o711); err != nil {
		t.Fatal(err)
	}
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), sweepChildEnv+"="+state)
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	select {
	case <-waitFile(state + ".ready"):
	case err := <-exited:
		t.Fatalf("the pooled child ended: %v", err)
	case <-time.After(2 * time.Minute):
		child.Process.Kill()
		<-exited
		t.Fatal("the pooled child did not get ready in 2 minutes")
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	pid := child.Process.Pid
	left := childLeftovers(state, pid, "")
	if len(left["cgroup"]) < 3 || len(left["process"]) == 0 || len(left["state"]) == 0 || len(left["mount"]) == 0 {
		t.Fatalf("the killed child should have left guests, cgroups, mounts and state behind: %v", left)
	}

	sup := supervisor.New(supervisor.Config{StateDir: state})
	res := runWith(t, sup, supervisor.Request{ScriptPath: guestScript(t, "emit('ran', 'yes')\n")})
	// The sweep ran before this run: nothing of the killed child is left
	// now (its processes are killed, then its cgroups removed). The run's
	// own directory may still be there: it is torn down after its result.
	if res.Status != sandbox.StatusOK {
		t.Fatalf("run after the sweep: %s", summary(res))
	}
	if left := childLeftovers(state, pid, res.RunID); len(left) != 0 {
		t.Errorf("left behind by the killed supervisor after the next one's first run: %v", left)
	}
	if err := sup.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(state); len(entries) != 0 {
		t.Errorf("state dir holds %d entries", len(entries))
	}
}

// childLeftovers lists, by kind, what the supervisor process pid left:
// its sandboxes' cgroups and their processes, the mounts and the entries
// of its state directory, except, when ownRun is not empty, what the next
// supervisor (this process) made for its run ownRun: its runs root, its
// backend's state and, from earlier versions, a run directory named after
// the run.
func childLeftovers(state string, pid int, ownRun string) map[string][]string {
	out := map[string][]string{}
	prefix := fmt.Sprintf("apysup-%d-", pid)
	own := func(s string) bool {
		return ownRun != "" && (strings.Contains(s, "apysup-"+ownRun+"-") || strings.Contains(s, fmt.Sprintf("-%d-", os.Getpid())))
	}
	filepath.WalkDir("/sys/fs/cgroup", func(p string, d os.DirEntry, err error) error {
		switch {
		case err != nil || !d.IsDir():
			return nil
		case strings.HasPrefix(d.Name(), prefix):
			out["cgroup"] = append(out["cgroup"], p)
			if b, err := os.ReadFile(filepath.Join(p, "cgroup.procs")); err == nil {
				out["process"] = append(out["process"], strings.Fields(string(b))...)
			}
			return filepath.SkipDir
		case strings.Count(p, "/") > 8:
			return filepath.SkipDir
		}
		return nil
	})
	entries, _ := os.ReadDir(state)
	for _, e := range entries {
		if (strings.Contains(e.Name(), fmt.Sprintf("-%d-", pid)) || strings.HasPrefix(e.Name(), "apysup-run-")) && !own(e.Name()) {
			out["state"] = append(out["state"], e.Name())
		}
	}
	if mi, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, line := range strings.Split(string(mi), "\n") {
			if strings.Contains(line, state) && (strings.Contains(line, fmt.Sprintf("-%d-", pid)) || strings.Contains(line, "apysup-run-")) && !own(line) {
				out["mount"] = append(out["mount"], line)
			}
		}
	}
	return out
}

// waitFile is closed once path exists.
func waitFile(path string) <-chan struct{} {
	c := make(chan struct{})
	go func() {
		defer close(c)
		for {
			if _, err := os.Stat(path); err == nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return c
}
